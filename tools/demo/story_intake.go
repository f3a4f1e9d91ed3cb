package demo

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
)

// Steps 1 and 2: the work comes in. A Slack mention becomes a trigger
// event, the daemon files it as a subject and a queued dispatch, and its
// scheduler leases it.

// stepSlack: Alice mentions the bot in #eng; the Slack trigger, connected
// over Socket Mode, acks the envelope and emits one flat trigger/event.
func (s *story) stepSlack() error {
	const bin = "animus-trigger-slack"
	s.Step(`1. In Slack #eng, Alice writes "@animus please review PR #42": animus-trigger-slack turns it into a trigger/event`)
	if err := s.need(bin); err != nil {
		return s.fail(bin, err)
	}
	env := s.slack.Env()
	env["SLACK_TRIGGER_ID"] = storyTrigger
	h, err := s.Spawn(s.ctx, bin, func(c *fakehost.Config) { c.Dir, c.Env, c.EnvMode = s.project, env, fakehost.EnvDaemonNarrow })
	if err != nil {
		return s.fail(bin, err)
	}
	s.trigger = h
	if _, err := h.Initialize(s.ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}); err != nil {
		return s.fail(bin, err)
	}
	_, s.seen[h] = h.WireLines(0) // the handshake is the same for every plugin: show the method frames
	if _, err := s.call(h, "trigger/watch", json.RawMessage(`{}`), nil); err != nil {
		return s.fail(bin, err)
	}
	if err := s.slack.WaitConnections(s.ctx, 1); err != nil {
		return s.fail(bin, err)
	}
	s.Say("Socket Mode is up (apps.connections.open, a websocket to the fake Slack); Slack now delivers the mention as an events_api envelope")
	ts := s.slack.NextTS()
	mention := fakeslack.Callback(s.slack.Options().TeamID, "EvSTORY42", fakeslack.Mention(storyChannel, storyAuthor, storyMention, ts))
	if err := s.slack.Send(fakeslack.EventsAPI("env-story-1", 0, mention)); err != nil {
		return s.fail(bin, err)
	}
	ack, err := s.slack.WaitAck(s.ctx, "env-story-1")
	if err != nil {
		return s.fail(bin, err)
	}
	events, err := waitTriggerEvents(s.ctx, h, 1)
	s.Frames(h)
	if err != nil {
		return s.fail(bin, err)
	}
	ev := events[0]
	payload, _ := ev["payload"].(map[string]any)
	s.res.EventID, _ = ev["event_id"].(string)
	s.res.TriggerID, _ = ev["trigger_id"].(string)
	s.res.EventKind, _ = payload["kind"].(string)
	s.res.EventText, _ = payload["text"].(string)
	s.mentionTS, _ = payload["ts"].(string)
	if err := s.Expect(len(events) == 1 && s.res.TriggerID == storyTrigger && s.res.EventKind == "slack.mention" && s.res.EventText == storyMention,
		"envelope acked in %v; one flat event %s for trigger %s: %s %q", ack.Round(time.Microsecond), s.res.EventID, s.res.TriggerID, s.res.EventKind, s.res.EventText); err != nil {
		return s.fail(bin, err)
	}
	s.emit("trigger-event-received", map[string]any{"event_id": s.res.EventID, "trigger_id": s.res.TriggerID, "kind": s.res.EventKind})
	s.record(bin, "Socket Mode mention → 1 flat trigger/event (ack %v)", ack.Round(time.Millisecond))
	return nil
}

// ackTrigger tells the trigger the daemon routed its event (a
// notification, never answered).
func (s *story) ackTrigger(status string) error {
	if err := s.trigger.Notify("trigger/ack", map[string]string{"event_id": s.res.EventID, "status": status}); err != nil {
		return err
	}
	time.Sleep(20 * time.Millisecond) // let a (wrong) reply show up before the frames are printed
	s.Frames(s.trigger)
	if v := s.trigger.Violations(); len(v) > 0 {
		return fmt.Errorf("trigger/ack: %v", v)
	}
	return nil
}

// storySubject is the part of a Subject the story reads.
type storySubject struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

type storyEnqueued struct {
	EntryID   string `json:"entry_id"`
	SubjectID string `json:"subject_id"`
}

// stepDispatch: the daemon files the mention as a subject, enqueues a
// dispatch for it, and its scheduler tick leases it, passing over a
// subject whose workflow is already running. The queue's part is each
// daemon line's own (story_queue.go).
func (s *story) stepDispatch() error {
	const subj, queue = "animus-subject-sqlite", "animus-queue-sqlite"
	s.Step("2. The daemon files the work: a subject in animus-subject-sqlite, a dispatch in animus-queue-sqlite, then its tick leases")
	if err := s.need(subj, queue); err != nil {
		return err
	}
	h, err := s.Spawn(s.ctx, subj, func(c *fakehost.Config) { c.Dir = s.project })
	if err != nil {
		return s.fail(subj, err)
	}
	s.subjects = h
	if _, err := h.Initialize(s.ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}); err != nil {
		return s.fail(subj, err)
	}
	_, s.seen[h] = h.WireLines(0)

	s.Say(`Earlier, a cron queued "Bump dependencies", and its workflow wf-nightly-7 is still running`)
	var other, task storySubject
	resp, err := s.call(h, "task/create", map[string]any{"title": "Bump dependencies", "priority": "low", "labels": []string{"chore"}}, &other)
	if err != nil {
		return s.fail(subj, err)
	}
	if err := s.mirror.putSubject(resp.Result); err != nil {
		return err
	}
	q, err := s.queueClient()
	if err != nil {
		return s.fail(queue, err)
	}
	if s.res.OtherKey, err = s.queueBacklog(q, other); err != nil {
		return s.fail(queue, err)
	}

	s.Say("The mention becomes a subject (task/create) and a dispatch of workflow \"review\" (one queue process per call)")
	resp, err = s.call(h, "task/create", map[string]any{"title": "Review PR #42", "body": s.res.EventText + "\n\n(from Slack, " + s.res.EventID + ")",
		"priority": "high", "labels": []string{"slack", "review"}}, &task)
	if err != nil {
		return s.fail(subj, err)
	}
	if err := s.mirror.putSubject(resp.Result); err != nil {
		return err
	}
	s.res.SubjectID = task.ID
	entry, err := s.queueReview(q, task)
	if err != nil {
		return s.fail(queue, err)
	}
	s.res.SubjectKey, s.res.EntryID = entry.SubjectID, entry.EntryID
	s.emit("subject-created", map[string]any{"subject_id": task.ID, "title": task.Title})
	s.emit("queue-enqueued", map[string]any{"entry_id": entry.EntryID, "subject_id": entry.SubjectID, "workflow_ref": storyPhase})
	s.sync()
	if err := s.ackTrigger("queued"); err != nil {
		return s.fail("animus-trigger-slack", err)
	}
	s.OK("subject %s; entry %s (subject key %s); trigger/ack {status: queued} sent to the trigger", task.ID, entry.EntryID, entry.SubjectID)

	if s.res.Leased, err = s.queueLease(q); err != nil {
		return s.fail(queue, err)
	}
	s.mirror.entryStatus(entry.EntryID, "in-flight")
	s.mirror.putWorkflow(fakedaemon.WorkflowRun{ID: storyWorkflow, Definition: storyPhase, Status: "running", SubjectID: task.ID, StartedAt: stamp()})
	resp, err = s.call(h, "task/status", map[string]string{"id": task.ID, "status": "in_progress"}, nil)
	if err != nil {
		return s.fail(subj, err)
	}
	if err := s.mirror.putSubject(resp.Result); err != nil {
		return err
	}
	s.emit("workflow_started", map[string]any{"workflow_id": storyWorkflow, "subject_id": task.ID, "entry_id": entry.EntryID})
	s.sync()
	s.record(subj, "2 subjects created (task/create), the review → in-progress")
	return nil
}

// queueClient prepares one-process-per-call queue calls bound to the
// project, as the daemon runs a queue. A 0.7 daemon first applies its
// gate (story_queue07.go).
func (s *story) queueClient() (*queueDemo, error) {
	if s.queue != nil {
		return s.queue, nil
	}
	bin := filepath.Join(s.BinDir, "animus-queue-sqlite")
	m, err := fakehost.Probe(s.ctx, bin, fakehost.ProbeOptions{Schemas: s.Schemas})
	if err != nil {
		return nil, err
	}
	q := &queueDemo{Demo: s.Demo, bin: bin, dir: s.project, declared: m.EnvNames()}
	if s.ticketed() {
		if err := s.queueGate(q); err != nil {
			return nil, err
		}
	}
	s.queue = q
	return q, nil
}

func leasedText(ls []StoryLease) string {
	var out []string
	for _, l := range ls {
		out = append(out, l.EntryID+" (subject "+l.SubjectID+")")
	}
	return strings.Join(out, ", ")
}

func stamp() string { return time.Now().UTC().Format(time.RFC3339Nano) }
