package demo

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// The 0.7 daemon's queue traffic in the story (queue-v2.md §4): the gate at
// start, queue/v2/enqueue with idempotency keys, a dispatch tick through
// queue/v2/lease with the daemon's owner id, fresh workflow ids and every
// fence it holds in exclude, a heartbeat renewal, queue/v2/completion, and
// the CLI's old-style list and stats in between, on the same entries.

// StoryV2 is what the queue's v2 calls answered in a 0.7 run.
type StoryV2 struct {
	Gate          string     // the gate's verdict: max_lease_batch and crate
	Replayed      bool       // a re-sent idempotency key: enqueued false, same entry
	LiveReturned  bool       // enqueueing a subject with a live entry returned it
	Fence         StoryFence // the review's ticket as leased
	Renewed       string     // renew outcome
	RenewExtended bool       // same owner and generations, expiry not earlier
	Retry         string     // a retried completion's outcome
	ListedAll     int        // entries the CLI's old-style queue/list saw
}

// StoryFence is the part of an execution fence the story checks.
type StoryFence struct {
	Owner              string
	WorkflowID         string
	WorkflowGeneration uint64
	SubjectID          string
	SubjectGeneration  uint64
	LeaseGeneration    uint64
	ExpiresAt          time.Time
}

// storyTickets is the 0.7 daemon's local lease projection: its owner id
// and the fences it holds, sent back verbatim (the types are strict).
type storyTickets struct {
	owner   string
	nightly json.RawMessage
	review  json.RawMessage
}

// wireFence decodes the fields of animus.execution-fence.v1 the story reads.
type wireFence struct {
	WorkflowID         string `json:"workflow_id"`
	WorkflowGeneration uint64 `json:"workflow_generation"`
	Subject            struct {
		QualifiedID string `json:"qualified_id"`
		Generation  uint64 `json:"generation"`
	} `json:"subject"`
	QueueLease struct {
		EntryID    string    `json:"entry_id"`
		OwnerID    string    `json:"owner_id"`
		Generation uint64    `json:"generation"`
		ExpiresAt  time.Time `json:"expires_at"`
	} `json:"queue_lease"`
}

func (f wireFence) story() StoryFence {
	return StoryFence{Owner: f.QueueLease.OwnerID, WorkflowID: f.WorkflowID, WorkflowGeneration: f.WorkflowGeneration,
		SubjectID: f.Subject.QualifiedID, SubjectGeneration: f.Subject.Generation, LeaseGeneration: f.QueueLease.Generation, ExpiresAt: f.QueueLease.ExpiresAt}
}

type v2Enqueued struct {
	Enqueued bool   `json:"enqueued"`
	EntryID  string `json:"entry_id"`
	Subject  struct {
		QualifiedID string `json:"qualified_id"`
		Generation  uint64 `json:"generation"`
	} `json:"subject"`
	Warning string `json:"warning"`
}

type v2Leased struct {
	Leased []struct {
		Entry     StoryLease      `json:"entry"`
		Execution json.RawMessage `json:"execution"`
	} `json:"leased"`
	Blocked []json.RawMessage `json:"blocked"`
}

type v2Mutation struct {
	Outcome   string          `json:"outcome"`
	Execution json.RawMessage `json:"execution"`
	Reason    string          `json:"reason"`
}

// queueGate is the 0.7 daemon's start: it refuses to run with a queue
// whose initialize fails require_generation_fenced_queue, and so does the
// story, with the rule that failed.
func (s *story) queueGate(q *queueDemo) error {
	s.Say("The 0.7 daemon's startup gate: a queue process is initialized and its reply checked (require_generation_fenced_queue)")
	h, err := s.Spawn(s.ctx, "animus-queue-sqlite", func(c *fakehost.Config) {
		c.Dir, c.Declared, c.EnvMode = q.dir, q.declared, fakehost.EnvDaemonNarrow
	})
	if err != nil {
		return err
	}
	res, err := h.Initialize(s.ctx, fakehost.Handshake{Preset: fakehost.PresetQueueClient})
	if err != nil {
		return err
	}
	_, s.seen[h] = h.WireLines(0)
	if _, err := h.Shutdown(s.ctx, fakehost.LadderDaemon); err != nil {
		return err
	}
	caps, err := conformance.RequireGenerationFencedQueue(res)
	if err != nil {
		return fmt.Errorf("the Animus 0.7 daemon would not start with this queue: %w", err)
	}
	s.res.V2.Gate = fmt.Sprintf("crate %s, max_lease_batch %d", res.KindCapabilities["queue"].CrateVersion, caps.MaxLeaseBatch)
	s.OK("gate passed: generation_fenced_leases_v1, %s, the six queue/v2 methods advertised", s.res.V2.Gate)
	q.gated = true
	s.v2.owner = "daemon-" + randomHex(8)
	return nil
}

// backlog07: the nightly dispatch was enqueued and leased by an earlier
// tick; its fence is in the daemon's projection. The cron firing again
// gets the live entry back instead of a second one.
func (s *story) backlog07(q *queueDemo, other storySubject) (string, error) {
	first, err := s.enqueue07(q, other, "cron:nightly", "dependency-bump", "cron:nightly:run-7")
	if err != nil {
		return "", err
	}
	leased, err := s.lease07Call(q, 1, []string{"wf-nightly-7"})
	if err != nil {
		return "", err
	}
	if len(leased.Leased) != 1 || leased.Leased[0].Entry.EntryID != first.EntryID {
		return "", fmt.Errorf("the earlier tick did not lease the nightly entry: %s", shortJSON(mustJSON(leased), 300))
	}
	s.v2.nightly = leased.Leased[0].Execution
	s.mirror.entryStatus(first.EntryID, "in-flight")
	s.Say("Its cron fires again while wf-nightly-7 runs under that ticket; the daemon sends the next run's key")
	again, err := s.enqueue07(q, other, "cron:nightly", "dependency-bump", "cron:nightly:run-8")
	if err != nil {
		return "", err
	}
	s.res.V2.LiveReturned = !again.Enqueued && again.EntryID == first.EntryID
	if err := s.Expect(s.res.V2.LiveReturned, "enqueued:false, the live entry %s returned (%s)", again.EntryID, again.Warning); err != nil {
		return "", err
	}
	return first.Subject.QualifiedID, nil
}

// review07 enqueues the review with the trigger delivery as its
// idempotency key; Slack redelivering the event re-sends the same key.
func (s *story) review07(q *queueDemo, task storySubject) (storyEnqueued, error) {
	key := s.res.EventID + ":" + storyTrigger
	e, err := s.enqueue07(q, task, "trigger:"+storyTrigger, storyPhase, key)
	if err != nil {
		return storyEnqueued{}, err
	}
	s.Say("Slack redelivers the event (no ack seen in time): the same idempotency key is sent again")
	again, err := s.enqueue07(q, task, "trigger:"+storyTrigger, storyPhase, key)
	if err != nil {
		return storyEnqueued{}, err
	}
	s.res.V2.Replayed = !again.Enqueued && again.EntryID == e.EntryID && again.Subject == e.Subject
	if err := s.Expect(s.res.V2.Replayed, "enqueued:false, same entry %s, subject %s generation %d", again.EntryID, again.Subject.QualifiedID, again.Subject.Generation); err != nil {
		return storyEnqueued{}, err
	}
	s.Say("CLI: `animus queue list` (old-style queue/list {}) sees the ticketed entries under their canonical ids")
	r, err := q.call(s.ctx, "queue/list", map[string]any{})
	if err != nil {
		return storyEnqueued{}, err
	}
	var list struct {
		Entries []StoryLease `json:"entries"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &list) != nil {
		return storyEnqueued{}, fmt.Errorf("queue/list: %s", r.Raw)
	}
	s.res.V2.ListedAll = len(list.Entries)
	if err := s.Expect(len(list.Entries) == 2, "%d entries: the running nightly one and the review", len(list.Entries)); err != nil {
		return storyEnqueued{}, err
	}
	return storyEnqueued{EntryID: e.EntryID, SubjectID: e.Subject.QualifiedID}, nil
}

// enqueue07 sends queue/v2/enqueue with an idempotency key.
func (s *story) enqueue07(q *queueDemo, sub storySubject, source, workflowRef, key string) (v2Enqueued, error) {
	var e v2Enqueued
	r, err := q.call(s.ctx, "queue/v2/enqueue", map[string]any{"subject_dispatch": storyDispatch(sub, source, workflowRef), "idempotency_key": key})
	if err != nil {
		return e, err
	}
	if r.Error != nil || json.Unmarshal(r.Result, &e) != nil || e.EntryID == "" || e.Subject.Generation == 0 {
		return e, fmt.Errorf("queue/v2/enqueue: %s", r.Raw)
	}
	if e.Enqueued {
		s.mirror.putEntry(fakedaemon.QueueEntry{ID: e.EntryID, SubjectID: e.Subject.QualifiedID, Status: "ready", Priority: 2, EnqueuedAt: stamp()})
	}
	return e, nil
}

// lease07Call is one dispatch tick's queue/v2/lease: max fresh workflow
// ids and every fence the daemon holds in exclude (omitted when none).
func (s *story) lease07Call(q *queueDemo, max int, workflowIDs []string) (v2Leased, error) {
	var out v2Leased
	params := map[string]any{"max": max, "owner_id": s.v2.owner, "workflow_ids": workflowIDs}
	var exclude []json.RawMessage
	for _, f := range []json.RawMessage{s.v2.nightly, s.v2.review} {
		if f != nil {
			exclude = append(exclude, f)
		}
	}
	if len(exclude) > 0 {
		params["exclude"] = exclude
	}
	r, err := q.call(s.ctx, "queue/v2/lease", params)
	if err != nil {
		return out, err
	}
	if r.Error != nil || json.Unmarshal(r.Result, &out) != nil {
		return out, fmt.Errorf("queue/v2/lease: %s", r.Raw)
	}
	return out, nil
}

// lease07: the tick leases up to 2 (two free slots, two fresh workflow
// ids); only the review is pending. The CLI counts, then the workflow's
// heartbeat renews the ticket.
func (s *story) lease07(q *queueDemo) ([]StoryLease, error) {
	s.Say("Dispatch tick: queue/v2/lease max 2 as owner %s, fresh workflow ids, the running nightly fence in exclude", s.v2.owner)
	leased, err := s.lease07Call(q, 2, []string{storyWorkflow, "wf-" + randomHex(6)})
	if err != nil {
		return nil, err
	}
	var out []StoryLease
	for _, l := range leased.Leased {
		out = append(out, l.Entry)
	}
	var f wireFence
	if len(leased.Leased) == 1 {
		s.v2.review = leased.Leased[0].Execution
		_ = json.Unmarshal(s.v2.review, &f)
	}
	s.res.V2.Fence = f.story()
	if err := s.Expect(len(out) == 1 && out[0].EntryID == s.res.EntryID && out[0].WorkflowID == storyWorkflow && f.QueueLease.OwnerID == s.v2.owner &&
		f.QueueLease.EntryID == s.res.EntryID && f.WorkflowID == storyWorkflow && f.Subject.QualifiedID == s.res.SubjectKey && f.Subject.Generation > 0 && f.QueueLease.Generation > 0,
		"leased %s as %s; ticket: subject %s generation %d, lease generation %d, owner %s, expires %s",
		leasedText(out), storyWorkflow, f.Subject.QualifiedID, f.Subject.Generation, f.QueueLease.Generation, f.QueueLease.OwnerID, f.QueueLease.ExpiresAt.Format(time.RFC3339)); err != nil {
		return out, err
	}
	s.Say("CLI: `animus queue stats` (old-style queue/stats {}) while both runs hold tickets")
	if _, err := q.call(s.ctx, "queue/stats", map[string]any{}); err != nil {
		return out, err
	}
	s.Say("The workflow's heartbeat: queue/v2/lease/renew with the stored fence (no ttl_secs)")
	m, err := s.mutate07(q, "queue/v2/lease/renew", map[string]any{"execution": s.v2.review})
	if err != nil {
		return out, err
	}
	var nf wireFence
	_ = json.Unmarshal(m.Execution, &nf)
	s.res.V2.Renewed = m.Outcome
	s.res.V2.RenewExtended = nf.QueueLease.OwnerID == f.QueueLease.OwnerID && nf.QueueLease.Generation == f.QueueLease.Generation &&
		nf.Subject == f.Subject && nf.WorkflowGeneration == f.WorkflowGeneration && !nf.QueueLease.ExpiresAt.Before(f.QueueLease.ExpiresAt)
	if err := s.Expect(m.Outcome == "applied" && s.res.V2.RenewExtended, "renew %s: same owner and generations, expires %s (not earlier)",
		m.Outcome, nf.QueueLease.ExpiresAt.Format(time.RFC3339)); err != nil {
		return out, err
	}
	s.v2.review = m.Execution // the daemon stores the renewed fence
	s.record("animus-queue-sqlite", "gate passed; 4 v2 enqueues (a replayed key and a live subject answered with their entries), 2 v2 leases (owner, workflow ids, exclude), renew")
	return out, nil
}

// complete07: the run finished; the daemon completes its ticket, and a
// retry (as after a lost reply) answers already_applied.
func (s *story) complete07(q *queueDemo) error {
	params := map[string]any{"execution": s.v2.review, "status": "completed", "workflow_ref": storyPhase}
	m, err := s.mutate07(q, "queue/v2/completion", params)
	if err != nil {
		return err
	}
	s.res.Completion = m.Outcome
	s.Say("The reply is lost and the daemon retries the completion with the same fence")
	retry, err := s.mutate07(q, "queue/v2/completion", params)
	if err != nil {
		return err
	}
	s.res.V2.Retry = retry.Outcome
	return s.Expect(m.Outcome == "applied" && retry.Outcome == "already_applied", "completion %s, the retry %s", m.Outcome, retry.Outcome)
}

// mutate07 sends one ticket mutation and decodes its outcome.
func (s *story) mutate07(q *queueDemo, method string, params map[string]any) (v2Mutation, error) {
	var m v2Mutation
	r, err := q.call(s.ctx, method, params)
	if err != nil {
		return m, err
	}
	if r.Error != nil || json.Unmarshal(r.Result, &m) != nil || m.Outcome == "" {
		return m, fmt.Errorf("%s: %s", method, r.Raw)
	}
	return m, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
