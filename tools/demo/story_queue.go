package demo

import (
	"encoding/json"
	"fmt"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// The queue's part of steps 2 and 5, as each daemon line does it: a 0.6
// daemon speaks queue protocol 0.3.2 (exclude_subjects, completion by
// entry id); a 0.7 daemon leases, renews and completes through the
// generation-fenced queue/v2 methods (story_queue07.go) while its CLI
// still lists and counts with the old-style ones.

// ticketed reports whether the story runs as a daemon line whose
// dispatches go through queue/v2 tickets.
func (s *story) ticketed() bool { return s.Daemon == fakehost.Daemon07 }

// sayLine narrates what the line's callers send in initialize.
func (s *story) sayLine() {
	if s.ticketed() {
		s.Say("As Animus 0.7.0-rc.52: the generic host (subject, trigger, logs, transport) sends protocol 1.2.0, host 0.1.0 and no")
		s.Say("init_extensions; the queue, notifier and durable clients send 1.1.0 with project_binding. Queue dispatch is queue/v2.")
		return
	}
	s.Say("As Animus 0.6.33: the generic host (subject, trigger, logs, transport) sends protocol 1.0.0, host 0.1.0; the queue,")
	s.Say("notifier and durable clients send 1.1.0 with project_binding. Queue dispatch is queue protocol 0.3.2.")
}

// queueBacklog files the nightly dispatch whose workflow is still running
// and returns its subject key.
func (s *story) queueBacklog(q *queueDemo, other storySubject) (string, error) {
	if s.ticketed() {
		return s.backlog07(q, other)
	}
	s.Say("Its cron fires again: queue 0.3.2 appends a second entry for the running subject")
	e, err := s.enqueue06(q, other, "cron:nightly", "dependency-bump")
	return e.SubjectID, err
}

// queueReview enqueues the review's dispatch.
func (s *story) queueReview(q *queueDemo, task storySubject) (storyEnqueued, error) {
	if s.ticketed() {
		return s.review07(q, task)
	}
	return s.enqueue06(q, task, "trigger:"+storyTrigger, storyPhase)
}

// queueLease is the daemon's dispatch tick; only the review may be leased.
func (s *story) queueLease(q *queueDemo) ([]StoryLease, error) {
	if s.ticketed() {
		return s.lease07(q)
	}
	s.Say("Dispatch tick: lease 1 with the daemon's workflow id; the running subject is in exclude_subjects")
	r, err := q.call(s.ctx, "queue/lease", map[string]any{"max": 1, "workflow_ids": []string{storyWorkflow}, "exclude_subjects": []string{s.res.OtherKey}})
	if err != nil {
		return nil, err
	}
	var lease struct {
		Leased []StoryLease `json:"leased"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &lease) != nil {
		return nil, fmt.Errorf("queue/lease: %s", r.Raw)
	}
	if err := s.Expect(len(lease.Leased) == 1 && lease.Leased[0].EntryID == s.res.EntryID && lease.Leased[0].WorkflowID == storyWorkflow,
		"leased 1 entry, %s, as %s: the review, although \"Bump dependencies\" is first in line", leasedText(lease.Leased), storyWorkflow); err != nil {
		return lease.Leased, err
	}
	s.record("animus-queue-sqlite", "2 enqueued, leased 1 with workflow_ids + exclude_subjects")
	return lease.Leased, nil
}

// queueComplete finishes the review's entry the line's way, then reads
// the queue's counts as the CLI's `animus queue stats` does.
func (s *story) queueComplete(q *queueDemo) error {
	want, pending, assigned := `{"changed":true,"not_found":false}`, 1, 0
	if s.ticketed() {
		if err := s.complete07(q); err != nil {
			return err
		}
		// The nightly run still holds its ticket.
		want, pending, assigned = "applied", 0, 1
	} else {
		r, err := q.call(s.ctx, "queue/completion", map[string]string{"entry_id": s.res.EntryID, "status": "completed", "workflow_id": storyWorkflow, "workflow_ref": storyPhase})
		if err != nil {
			return err
		}
		s.res.Completion = string(r.Result)
	}
	st, err := q.call(s.ctx, "queue/stats", map[string]any{})
	if err != nil {
		return err
	}
	var stats struct {
		Pending  int `json:"pending"`
		Assigned int `json:"assigned"`
	}
	if st.Error != nil || json.Unmarshal(st.Result, &stats) != nil {
		return fmt.Errorf("queue/stats: %s", st.Raw)
	}
	s.res.PendingAfter, s.res.AssignedAfter = stats.Pending, stats.Assigned
	return s.Expect(s.res.SubjectStatus == "done" && s.res.Completion == want && stats.Pending == pending && stats.Assigned == assigned,
		"subject %s; completion %s; the queue holds %d pending, %d assigned (the nightly subject's)", s.res.SubjectStatus, s.res.Completion, stats.Pending, stats.Assigned)
}

// enqueue06 sends a 0.3.2 queue/enqueue of a SubjectDispatch for sub
// (generic SubjectRef form: the subject plugin's kind is not a built-in
// one).
func (s *story) enqueue06(q *queueDemo, sub storySubject, source, workflowRef string) (storyEnqueued, error) {
	r, err := q.call(s.ctx, "queue/enqueue", map[string]any{"subject_dispatch": storyDispatch(sub, source, workflowRef)})
	if err != nil {
		return storyEnqueued{}, err
	}
	var e storyEnqueued
	if r.Error != nil || json.Unmarshal(r.Result, &e) != nil || e.EntryID == "" {
		return e, fmt.Errorf("queue/enqueue: %s", r.Raw)
	}
	s.mirror.putEntry(fakedaemon.QueueEntry{ID: e.EntryID, SubjectID: e.SubjectID, Status: "ready", Priority: 2, EnqueuedAt: stamp()})
	return e, nil
}

// storyDispatch is the SubjectDispatch both lines enqueue.
func storyDispatch(sub storySubject, source, workflowRef string) map[string]any {
	return map[string]any{
		"requested_at":   stamp(),
		"subject":        map[string]any{"kind": "task", "id": sub.ID, "title": sub.Title},
		"trigger_source": source,
		"workflow_ref":   workflowRef,
	}
}
