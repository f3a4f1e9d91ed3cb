package queue

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// The semantics table of queue.md §3.4, one row per method and state. Each
// row runs on a fresh queue holding P (pending), H (held) and A (assigned
// to workflow wf-A); "nope" names no entry.
func TestMutationTable(t *testing.T) {
	type row struct {
		method, target, extra string
		result                string // exact result, or
		code                  int    // an error code
		msg                   string
		data                  map[string]any
		states                string // queue afterwards ("" = unchanged)
	}
	const start = "P:pending H:held A:assigned"
	nf := `{"changed":false,"not_found":true}`
	same := `{"changed":false,"not_found":false}`
	changed := `{"changed":true,"not_found":false}`
	rows := []row{
		{method: "queue/hold", target: "P", extra: `,"reason":"wait"`, result: changed, states: "P:held H:held A:assigned"},
		{method: "queue/hold", target: "H", result: same},
		{method: "queue/hold", target: "A", code: -32203, msg: "queue entry A is not in the expected pre-mutation status", data: map[string]any{"actual_state": "assigned"}},
		{method: "queue/hold", target: "nope", result: nf},
		{method: "queue/release", target: "P", result: same},
		{method: "queue/release", target: "H", result: changed, states: "P:pending H:pending A:assigned"},
		{method: "queue/release", target: "A", code: -32203, msg: "queue entry A is not in the expected pre-mutation status"},
		{method: "queue/release", target: "nope", result: nf},
		{method: "queue/drop", target: "P", result: changed, states: "H:held A:assigned"},
		{method: "queue/drop", target: "H", result: changed, states: "P:pending A:assigned"},
		{method: "queue/drop", target: "A", result: changed, states: "P:pending H:held"},
		{method: "queue/drop", target: "nope", result: nf},
		{method: "queue/mark_assigned", target: "P", extra: `,"workflow_id":"wf-P"`, result: changed, states: "P:assigned H:held A:assigned"},
		{method: "queue/mark_assigned", target: "A", extra: `,"workflow_id":"other"`, result: same},
		{method: "queue/mark_assigned", target: "H", code: -32203, msg: "queue entry H is not in the expected pre-mutation status", data: map[string]any{"actual_state": "held"}},
		{method: "queue/mark_assigned", target: "nope", result: nf},
		{method: "queue/completion", target: "A", extra: `,"status":"completed"`, result: changed, states: "P:pending H:held"},
		{method: "queue/completion", target: "A", extra: `,"status":"failed","workflow_ref":"standard","workflow_id":"wf-A"`, result: changed, states: "P:pending H:held"},
		{method: "queue/completion", target: "A", extra: `,"status":"cancelled","workflow_ref":"other"`, result: nf},
		{method: "queue/completion", target: "A", extra: `,"status":"completed","workflow_id":"wf-other"`, result: nf},
		{method: "queue/completion", target: "P", extra: `,"status":"completed"`, result: nf},
		{method: "queue/completion", target: "H", extra: `,"status":"completed"`, result: nf},
		{method: "queue/completion", target: "nope", extra: `,"status":"completed"`, result: nf},
		{method: "queue/completion", target: "A", extra: `,"status":"done"`, code: -32602,
			msg: "queue/completion failed: invalid completion status: 'done' (expected one of: completed, failed, cancelled)"},
		{method: "queue/release_pending", target: "A", extra: `,"reason":"spawn-deferred"`, result: `{"entry_id":"A","status":"pending"}`, states: "P:pending H:held A:pending"},
		{method: "queue/release_pending", target: "P", extra: `,"reason":"r"`, code: -32208, msg: "entry P is in state 'pending', expected 'assigned'", data: map[string]any{"actual_state": "pending"}},
		{method: "queue/release_pending", target: "H", extra: `,"reason":"r"`, code: -32208, msg: "entry H is in state 'held', expected 'assigned'", data: map[string]any{"actual_state": "held"}},
		{method: "queue/release_pending", target: "nope", extra: `,"reason":"r"`, code: -32602, msg: "entry_id not found: nope"},
	}
	for _, r := range rows {
		t.Run(strings.TrimPrefix(r.method, "queue/")+"/"+r.target+r.extra, func(t *testing.T) {
			f := newFixture(t, testConfig{})
			names := []string{"P", "H", "A"}
			f.s.newID = func() string { n := names[0]; names = names[1:]; return n }
			for _, s := range []string{"TASK-P", "TASK-H", "TASK-A"} {
				f.enqueue(s, "")
			}
			f.h.OK(t, "queue/hold", `{"entry_id":"H"}`, nil)
			f.h.OK(t, "queue/lease", `{"max":1,"workflow_ids":["wf-A"],"exclude_subjects":["TASK-P"]}`, nil)
			if got := f.states(); got != start {
				t.Fatalf("setup: %s", got)
			}
			before := len(f.audit())
			params := `{"entry_id":"` + r.target + `"` + r.extra + `}`
			if r.code != 0 {
				f.wantErr(r.method, params, r.code, r.msg, r.data)
			} else {
				f.want(r.method, params, r.result)
			}
			want := r.states
			if want == "" {
				want = start
			}
			if got := f.states(); got != want {
				t.Errorf("queue after: %s, want %s", got, want)
			}
			f.checkCounts()
			// Exactly the state-changing calls leave one audit row.
			if got, wantRows := len(f.audit())-before, boolInt(r.result == changed || strings.Contains(r.result, `"status":"pending"`)); got != wantRows {
				t.Errorf("%d audit rows, want %d", got, wantRows)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestMutationsMissingParams(t *testing.T) {
	f := newFixture(t, testConfig{})
	for _, m := range []string{"queue/hold", "queue/release", "queue/drop", "queue/reorder", "queue/mark_assigned", "queue/completion", "queue/release_pending"} {
		f.wantErr(m, "", -32602, "missing params for "+m, nil)
		f.wantErr(m, `{"entry_ids":5,"entry_id":7}`, -32602, "invalid "+m+" params: invalid type for", nil)
	}
}

// release_pending keeps the position (and run_at) and clears the lease, so
// the entry is first in line again; its reason is kept in the audit trail.
func TestReleasePendingKeepsPosition(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.enqueue("TASK-1", `,"run_at":"2020-01-01T00:00:00Z"`)
	f.enqueue("TASK-2", "")
	f.h.OK(t, "queue/lease", `{"max":1,"workflow_ids":["wf-1"]}`, nil)
	f.want("queue/release_pending", `{"entry_id":"id-1","reason":"within-batch-duplicate-subject"}`, `{"entry_id":"id-1","status":"pending"}`)
	list := string(f.h.OK(t, "queue/list", `{"status":["pending"],"limit":1}`, nil))
	if !strings.Contains(list, `"entry_id":"id-1"`) || !strings.Contains(list, `"run_at":"2020-01-01T00:00:00Z"`) ||
		strings.Contains(list, "assigned_at") || strings.Contains(list, "workflow_id") {
		t.Errorf("released entry: %s", list)
	}
	f.wantErr("queue/release_pending", `{"entry_id":"id-1","reason":"again"}`, -32208, "expected 'assigned'", nil)
	if got := leased(t, f.h.OK(t, "queue/lease", `{"max":1,"workflow_ids":["wf-2"]}`, nil)); got != "id-1/wf-2" {
		t.Errorf("re-lease: %s", got)
	}
	trail := strings.Join(f.audit(), "\n")
	if !strings.Contains(trail, "id-1 queue/release_pending assigned>pending within-batch-duplicate-subject") {
		t.Errorf("reason not kept:\n%s", trail)
	}
}

func TestHoldReleaseTimestampsAndDeferred(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.enqueue("TASK-1", `,"run_at":"2099-01-01T00:00:00Z"`)
	f.enqueue("TASK-2", "")
	f.now = f.now.Add(time.Second)
	f.want("queue/hold", `{"entry_id":"id-1"}`, `{"changed":true,"not_found":false}`)
	if list := string(f.h.OK(t, "queue/list", `{"status":["held"]}`, nil)); !strings.Contains(list, `"held_at":"2026-06-14T12:00:01.123456789+00:00"`) {
		t.Errorf("held_at missing: %s", list)
	}
	f.want("queue/release", `{"entry_id":"id-1"}`, `{"changed":true,"not_found":false}`)
	if list := string(f.h.OK(t, "queue/list", "", nil)); strings.Contains(list, "held_at") || f.states() != "id-1:pending id-2:pending" {
		t.Errorf("after release: %s", list)
	}
}

func TestMarkAssignedWorkflowIDs(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.enqueue("TASK-1", "")
	f.enqueue("TASK-2", `,"run_at":"2099-01-01T00:00:00Z"`)
	f.want("queue/mark_assigned", `{"entry_id":"id-1"}`, `{"changed":true,"not_found":false}`)
	f.want("queue/mark_assigned", `{"entry_id":"id-2","workflow_id":"given"}`, `{"changed":true,"not_found":false}`) // ignores deferral
	list := string(f.h.OK(t, "queue/list", "", nil))
	if !strings.Contains(list, `"workflow_id":"id-3"`) || !strings.Contains(list, `"workflow_id":"given"`) {
		t.Errorf("workflow ids: %s", list)
	}
}

func TestReorder(t *testing.T) {
	tests := []struct {
		ids, want string
		count     int
	}{
		{`["c","a"]`, "c a b d", 3},
		{`["a"]`, "a b c d", 0},
		{`["a","b"]`, "a b c d", 0},
		{`["d"]`, "d a b c", 4},
		{`["x","b","b","nope"]`, "b a c d", 2},
		{`[]`, "a b c d", 0},
		{`["d","c","b","a"]`, "d c b a", 4},
	}
	for _, tt := range tests {
		t.Run(tt.ids, func(t *testing.T) {
			f := newFixture(t, testConfig{})
			names := []string{"a", "b", "c", "d"}
			f.s.newID = func() string { n := names[0]; names = names[1:]; return n }
			for _, s := range []string{"TASK-A", "TASK-B", "TASK-C", "TASK-D"} {
				f.enqueue(s, "")
			}
			f.h.OK(t, "queue/hold", `{"entry_id":"b"}`, nil) // any status takes part
			f.want("queue/reorder", `{"entry_ids":`+tt.ids+`}`, `{"reordered_count":`+strconv.Itoa(tt.count)+`}`)
			order := strings.Join(strings.Fields(strings.NewReplacer(":pending", "", ":held", "").Replace(f.states())), " ")
			if order != tt.want {
				t.Errorf("order %s, want %s", order, tt.want)
			}
			// The same order again changes nothing.
			f.want("queue/reorder", `{"entry_ids":`+tt.ids+`}`, `{"reordered_count":0}`)
			// New entries still go to the tail.
			f.s.newID = func() string { return "e" }
			f.enqueue("TASK-E", "")
			if got := f.states(); !strings.HasSuffix(got, "e:pending") {
				t.Errorf("enqueue after reorder: %s", got)
			}
			f.checkCounts()
		})
	}
}
