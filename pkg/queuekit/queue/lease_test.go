package queue

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// leased returns "entry_id/workflow_id" of a lease result.
func leased(t *testing.T, out json.RawMessage) string {
	t.Helper()
	var r struct {
		Leased []struct {
			EntryID    string `json:"entry_id"`
			WorkflowID string `json:"workflow_id"`
			Status     string `json:"status"`
		} `json:"leased"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, e := range r.Leased {
		if e.Status != "assigned" {
			t.Errorf("leased entry %s has status %q", e.EntryID, e.Status)
		}
		parts = append(parts, e.EntryID+"/"+e.WorkflowID)
	}
	return strings.Join(parts, " ")
}

func TestLeaseSelection(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.enqueue("TASK-A", "")                                                          // id-1
	f.enqueue("TASK-B", "")                                                          // id-2
	f.enqueue("TASK-A", "")                                                          // id-3, same subject as id-1
	f.enqueue("linear.issue::ENG-1", "")                                             // id-4
	f.enqueue("TASK-D", `,"run_at":"`+f.now.Add(time.Hour).Format(time.RFC3339)+`"`) // id-5, deferred
	f.enqueue("TASK-E", "")                                                          // id-6
	tests := []struct {
		params, want string
	}{
		// Exclusion plus per-batch subject exclusivity; the k-th leased
		// entry gets the k-th workflow id; the deferred entry is skipped.
		{`{"max":3,"workflow_ids":["w1","w2","w3"],"exclude_subjects":["TASK-B"]}`, "id-1/w1 id-4/w2 id-6/w3"},
		// Minted ids when none are supplied; TASK-A may go again in a new batch.
		{`{"max":5}`, "id-2/id-7 id-3/id-8"},
		{`{"max":5,"workflow_ids":null}`, ""},
	}
	for _, tt := range tests {
		if got := leased(t, f.h.OK(t, "queue/lease", tt.params, nil)); got != tt.want {
			t.Errorf("lease %s = %q, want %q", tt.params, got, tt.want)
		}
	}
	if got := f.states(); got != "id-1:assigned id-2:assigned id-3:assigned id-4:assigned id-5:pending id-6:assigned" {
		t.Errorf("states %s", got)
	}
	f.checkCounts()
}

func TestLeaseWireShapeAndSurplusIDs(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.enqueue("TASK-7", "")
	f.now = f.now.Add(time.Second)
	f.want("queue/lease", `{"max":3,"workflow_ids":["wf-a","wf-b","wf-c"]}`,
		`{"leased":[{"assigned_at":"2026-06-14T12:00:01.123456789+00:00","enqueued_at":"2026-06-14T12:00:00.123456789+00:00",`+
			`"entry_id":"id-1","status":"assigned","subject_dispatch":{"requested_at":"2026-06-14T11:00:00Z","subject":{"Task":{"id":"TASK-7"}},`+
			`"trigger_source":"test","workflow_ref":"standard"},"subject_id":"TASK-7","task_id":"TASK-7","workflow_id":"wf-a"}]}`)
	f.want("queue/lease", `{"max":1}`, `{"leased":[]}`)
}

func TestLeaseChecksAndMaxZero(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.enqueue("OLD", `,"run_at":"2020-01-01T00:00:00Z","expire_after_secs":1`)
	f.wantErr("queue/lease", `{"max":2,"workflow_ids":["a"]}`, -32206, "workflow_ids.len()=1 did not match max=2",
		map[string]any{"actual": 1, "expected": 2})
	f.wantErr("queue/lease", `{"max":0,"workflow_ids":["a"]}`, -32206, "workflow_ids.len()=1 did not match max=0", nil)
	f.wantErr("queue/lease", ``, -32602, "missing params for queue/lease", nil)
	f.wantErr("queue/lease", `{"max":"2"}`, -32602, "invalid queue/lease params: invalid type for `max`", nil)
	// max 0: nothing leased, nothing swept.
	f.want("queue/lease", `{"max":0}`, `{"leased":[]}`)
	f.want("queue/lease", `{"max":0,"workflow_ids":[]}`, `{"leased":[]}`)
	if got := f.states(); got != "id-1:pending" {
		t.Errorf("max 0 changed the queue: %s", got)
	}
	f.want("queue/lease", `{"max":1}`, `{"leased":[]}`) // the sweep removes the expired entry
	if got := f.states(); got != "" {
		t.Errorf("expired entry not swept by lease: %s", got)
	}
}

// With ANIMUS_QUEUE_LEASE_TTL_SECS an assigned entry whose lease ran out
// is leased again (new workflow id, same position) unless its subject is
// excluded; without it, leases never expire.
func TestLeaseTTLReclaim(t *testing.T) {
	for _, ttl := range []time.Duration{0, 10 * time.Second} {
		f := newFixture(t, testConfig{Rules: Rules{LeaseTTL: ttl}})
		f.enqueue("TASK-1", "")
		f.enqueue("TASK-2", "")
		if got := leased(t, f.h.OK(t, "queue/lease", `{"max":1,"workflow_ids":["first"]}`, nil)); got != "id-1/first" {
			t.Fatalf("first lease %s", got)
		}
		f.now = f.now.Add(11 * time.Second)
		got := leased(t, f.h.OK(t, "queue/lease", `{"max":1,"workflow_ids":["second"],"exclude_subjects":["TASK-1"]}`, nil))
		if got != "id-2/second" {
			t.Errorf("ttl %v: excluded subject reclaimed: %s", ttl, got)
		}
		got = leased(t, f.h.OK(t, "queue/lease", `{"max":1,"workflow_ids":["third"]}`, nil))
		want := ""
		if ttl > 0 {
			want = "id-1/third"
		}
		if got != want {
			t.Errorf("ttl %v: lease after expiry = %q, want %q", ttl, got, want)
		}
		if ttl > 0 {
			// The old workflow's completion no longer matches.
			f.want("queue/completion", `{"entry_id":"id-1","status":"completed","workflow_id":"first"}`, `{"changed":false,"not_found":true}`)
			trail := strings.Join(f.audit(), "\n")
			if !strings.Contains(trail, "id-1 queue/lease assigned>assigned lease expired") {
				t.Errorf("reclaim not audited:\n%s", trail)
			}
		}
	}
}
