package fakedaemon

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"
)

// The records of §1.4, as the daemon serialises them (optional fields
// omitted, enums kebab-case, timestamps RFC 3339 UTC).

// WorkflowRun is WorkflowRunSummary plus the opaque detail of workflow/get.
type WorkflowRun struct {
	ID         string          `json:"id"`
	Definition string          `json:"definition"`
	Status     string          `json:"status"`
	SubjectID  string          `json:"subject_id,omitempty"`
	StartedAt  string          `json:"started_at"`
	FinishedAt string          `json:"finished_at,omitempty"`
	Detail     json.RawMessage `json:"detail,omitempty"`
}

// QueueEntry is the control protocol's QueueEntry.
type QueueEntry struct {
	ID         string `json:"id"`
	SubjectID  string `json:"subject_id"`
	Status     string `json:"status"`
	Priority   int    `json:"priority"`
	EnqueuedAt string `json:"enqueued_at"`
	HoldReason string `json:"hold_reason,omitempty"`
}

// Subject is the subject protocol's Subject (the fields the fake uses).
type Subject struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Title     string          `json:"title"`
	Body      string          `json:"description,omitempty"`
	Status    string          `json:"status"`
	Priority  *int            `json:"priority,omitempty"`
	Assignee  string          `json:"assignee,omitempty"`
	Labels    []string        `json:"labels,omitempty"`
	CreatedAt string          `json:"created_at"`
	UpdatedAt string          `json:"updated_at"`
	Custom    json.RawMessage `json:"custom,omitempty"`
}

// PluginInfo is the control flavour of PluginInfo.
type PluginInfo struct {
	Name              string `json:"name"`
	Version           string `json:"version"`
	Kind              string `json:"kind"`
	Source            string `json:"source,omitempty"`
	SignatureVerified bool   `json:"signature_verified"`
	Description       string `json:"description,omitempty"`
}

// state is the daemon's data. Everything is guarded by mu.
type state struct {
	mu        sync.Mutex
	workflows map[string]*WorkflowRun
	wfOrder   []string
	actors    map[string]json.RawMessage // workflow id → actor it was started with
	reasons   map[string]string          // workflow id → cancel reason
	queue     []*QueueEntry
	subjects  map[string]*Subject
	plugins   map[string]*PluginInfo
	seq       int
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// newState seeds fixtures every test can rely on: wf-1 running, wf-2
// completed, wf-3 paused; queue q-1 ready, q-2 held; subjects task:T-1
// ready, task:T-2 done; plugins animus-subject-sqlite and
// animus-queue-sqlite.
func newState(now time.Time) *state {
	t := stamp(now.Add(-time.Hour))
	s := &state{
		workflows: map[string]*WorkflowRun{}, actors: map[string]json.RawMessage{}, reasons: map[string]string{},
		subjects: map[string]*Subject{}, plugins: map[string]*PluginInfo{},
	}
	for _, w := range []*WorkflowRun{
		{ID: "wf-1", Definition: "standard", Status: "running", SubjectID: "task:T-1", StartedAt: t},
		{ID: "wf-2", Definition: "standard", Status: "completed", StartedAt: t, FinishedAt: t},
		{ID: "wf-3", Definition: "review", Status: "paused", StartedAt: t},
	} {
		w.Detail = json.RawMessage(`{"phases":[]}`)
		s.workflows[w.ID] = w
		s.wfOrder = append(s.wfOrder, w.ID)
	}
	s.queue = []*QueueEntry{
		{ID: "q-1", SubjectID: "task:T-1", Status: "ready", Priority: 2, EnqueuedAt: t},
		{ID: "q-2", SubjectID: "task:T-3", Status: "held", Priority: 3, EnqueuedAt: t, HoldReason: "waiting"},
	}
	for _, sub := range []*Subject{
		{ID: "task:T-1", Kind: "task", Title: "First task", Status: "ready", CreatedAt: t, UpdatedAt: t},
		{ID: "task:T-2", Kind: "task", Title: "Second task", Status: "done", CreatedAt: t, UpdatedAt: t},
	} {
		s.subjects[sub.ID] = sub
	}
	for _, p := range []*PluginInfo{
		{Name: "animus-subject-sqlite", Version: "0.1.0", Kind: "subject_backend", SignatureVerified: true},
		{Name: "animus-queue-sqlite", Version: "0.1.0", Kind: "queue", SignatureVerified: true},
	} {
		s.plugins[p.Name] = p
	}
	s.seq = 100
	return s
}

func (s *state) next(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s-%d", prefix, s.seq)
}

func (s *state) runs(status string) []*WorkflowRun {
	out := []*WorkflowRun{}
	for _, id := range s.wfOrder {
		if w := s.workflows[id]; status == "" || w.Status == status {
			c := *w
			c.Detail = nil
			out = append(out, &c)
		}
	}
	return out
}

func (s *state) sortedSubjects(kinds map[string]bool, statuses map[string]bool) []*Subject {
	out := []*Subject{}
	for _, sub := range s.subjects {
		if (len(kinds) == 0 || kinds[sub.Kind]) && (len(statuses) == 0 || statuses[sub.Status]) {
			out = append(out, sub)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func finished(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// ActorOf returns the actor workflow/run or workflow/execute received for a
// workflow id (raw JSON), or nil.
func (d *Daemon) ActorOf(workflowID string) json.RawMessage {
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	return d.state.actors[workflowID]
}

// CancelReason returns the reason workflow/cancel received for id.
func (d *Daemon) CancelReason(workflowID string) string {
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	return d.state.reasons[workflowID]
}

// Snapshot is daemon state a caller supplies instead of the fixtures: the
// end-to-end story runs real plugins and mirrors what they hold here, so
// a transport in front of the fake shows what actually happened.
type Snapshot struct {
	Workflows []WorkflowRun // in workflow/list order
	Queue     []QueueEntry  // in queue order
	Subjects  []Subject
	// Plugins replaces the plugin table when non-nil.
	Plugins []PluginInfo
}

// Seed replaces the workflows, queue and subjects (and, when given, the
// plugins) with s, fixtures included. Streams are not touched: events are
// published with EmitEvent and friends.
func (d *Daemon) Seed(s Snapshot) {
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	st := d.state
	st.workflows, st.wfOrder = map[string]*WorkflowRun{}, nil
	for _, w := range s.Workflows {
		if w.Detail == nil {
			w.Detail = json.RawMessage(`{}`)
		}
		if _, dup := st.workflows[w.ID]; !dup {
			st.wfOrder = append(st.wfOrder, w.ID)
		}
		st.workflows[w.ID] = &w
	}
	st.queue = nil
	for _, q := range s.Queue {
		st.queue = append(st.queue, &q)
	}
	st.subjects = map[string]*Subject{}
	for _, sub := range s.Subjects {
		st.subjects[sub.ID] = &sub
	}
	if s.Plugins != nil {
		st.plugins = map[string]*PluginInfo{}
		for _, p := range s.Plugins {
			st.plugins[p.Name] = &p
		}
	}
}
