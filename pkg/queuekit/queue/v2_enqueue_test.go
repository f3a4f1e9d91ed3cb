package queue

import (
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

const liveWarning = "subject task:T-1 already has an active generation; enqueue rejected"

// §5.4 (3): a new subject gets generation 1, each of five subjects too, and
// the list shows the canonical id.
func TestV2EnqueueGenerations(t *testing.T) {
	f := newFixture(t, testConfig{})
	for _, task := range []string{"TASK-1", "TASK-2", "TASK-3", "TASK-4", "task:TASK-5"} {
		r := f.add(addParams(task, ""))
		qid := "task:" + strings.TrimPrefix(task, "task:")
		if !r.Enqueued || r.Subject != (wire.SubjectGeneration{Generation: 1, QualifiedID: qid}) || r.Warning != "" {
			t.Errorf("%s: %+v", task, r)
		}
	}
	var list struct{ Entries []wire.Entry }
	f.h.OK(t, "queue/list", "", &list)
	e := list.Entries[0]
	if e.SubjectID != "task:TASK-1" || e.TaskID == nil || *e.TaskID != "TASK-1" || e.Status != "pending" {
		t.Errorf("listed %s", mustJSON(e))
	}
}

// §5.4 (4), (6): replays, live-subject adds and key conflicts.
func TestV2EnqueueIdempotency(t *testing.T) {
	f := newFixture(t, testConfig{})
	key := `,"idempotency_key":" k1 "`
	first := f.add(addParams("T-1", key))
	tests := []struct {
		name, params string
		enqueued     bool
		warning      string
		errMsg       string
	}{
		{"same key, same content", addParams("T-1", key), false, "", ""},
		{"new requested_at is a replay", strings.Replace(addParams("T-1", key), "11:00:00Z", "11:05:00Z", 1), false, "", ""},
		{"other workflow_ref", strings.Replace(addParams("T-1", key), `"standard"`, `"other"`, 1), false, "", "already bound to a different queue request"},
		{"other repository", addParams("T-1", key+`,"repository":{"repository":"r","base_ref":"refs/heads/main","head_ref":"refs/heads/x"}`), false, "", "already bound"},
		{"other run_at", addParams("T-1", key+`,"run_at":"2026-06-14T11:00:00Z"`), false, "", "already bound"},
		{"other vars", `{"subject_dispatch":` + v2Dispatch("T-1", `,"vars":{"a":"b"}`) + key + `}`, false, "", "already bound"},
		{"other actor", `{"subject_dispatch":` + v2Dispatch("T-1", `,"actor":{"user_id":"u"}`) + key + `}`, false, "", "already bound"},
		{"live subject, new key", addParams("T-1", `,"idempotency_key":"k2"`), false, liveWarning, ""},
		{"retry of that key", addParams("T-1", `,"idempotency_key":"k2"`), false, "", ""},
		{"that key, other content", addParams("T-1", `,"idempotency_key":"k2","run_at":"2030-01-01T00:00:00Z"`), false, "", "already bound"},
		{"live subject, no key", addParams("T-1", ""), false, liveWarning, ""},
	}
	for _, tt := range tests {
		if tt.errMsg != "" {
			f.wantErr("queue/v2/enqueue", tt.params, -32602, tt.errMsg, nil)
			continue
		}
		r := f.add(tt.params)
		if r.Enqueued != tt.enqueued || r.EntryID != first.EntryID || r.Subject != first.Subject || r.Warning != tt.warning {
			t.Errorf("%s: %+v", tt.name, r)
		}
	}
	f.want("queue/stats", "", `{"assigned":0,"deferred":0,"held":0,"pending":1,"total":1}`)

	// The subject is live while held and while assigned (ticketed) too.
	f.h.OK(t, "queue/hold", `{"entry_id":"`+first.EntryID+`"}`, nil)
	if r := f.add(addParams("T-1", "")); r.Warning != liveWarning || r.EntryID != first.EntryID {
		t.Errorf("held: %+v", r)
	}
	f.h.OK(t, "queue/release", `{"entry_id":"`+first.EntryID+`"}`, nil)
	fence := f.leaseOne("d")
	if r := f.add(addParams("T-1", "")); r.Warning != liveWarning || r.EntryID != first.EntryID {
		t.Errorf("assigned: %+v", r)
	}
	// After the entry finished, keys still replay; a new add is generation 2.
	f.completeT(fence, "completed")
	for _, k := range []string{key, `,"idempotency_key":"k2"`} {
		if r := f.add(addParams("T-1", k)); r.Enqueued || r.EntryID != first.EntryID || r.Warning != "" {
			t.Errorf("replay %s after finish: %+v", k, r)
		}
	}
	f.wantErr("queue/v2/enqueue", addParams("T-1", `,"idempotency_key":"k2","run_at":"2030-01-01T00:00:00Z"`), -32602, "already bound", nil)
	if r := f.add(addParams("T-1", "")); !r.Enqueued || r.EntryID == first.EntryID || r.Subject.Generation != 2 {
		t.Errorf("add after finish: %+v", r)
	}
}

// §5.4 (5): replays after drop and after an expiry sweep, including one
// swept by the replaying call itself; a conflicting key after a same-call
// sweep rolls the sweep back.
func TestV2EnqueueReplayAfterSweep(t *testing.T) {
	f := newFixture(t, testConfig{})
	deferred := `,"run_at":"2026-06-14T12:00:01Z","expire_after_secs":10`
	a := f.add(addParams("T-1", `,"idempotency_key":"a"`+deferred))
	b := f.add(addParams("T-2", `,"idempotency_key":"b"`))
	f.h.OK(t, "queue/drop", `{"entry_id":"`+b.EntryID+`"}`, nil)
	if r := f.add(addParams("T-2", `,"idempotency_key":"b"`)); r.Enqueued || r.EntryID != b.EntryID {
		t.Errorf("replay after drop: %+v", r)
	}
	f.now = t0.Add(time.Minute) // a's run_at + 10 s has passed
	f.wantErr("queue/v2/enqueue", addParams("T-1", `,"idempotency_key":"a"`), -32602, "already bound", nil)
	if got := f.listed(); got != "task:T-1:pending" {
		t.Errorf("the conflicting call's sweep was kept: %q", got)
	}
	if r := f.add(addParams("T-1", `,"idempotency_key":"a"`+deferred)); r.Enqueued || r.EntryID != a.EntryID {
		t.Errorf("replay swept in the same call: %+v", r)
	}
	if got := f.listed(); got != "" {
		t.Errorf("not swept: %q", got)
	}
	if r := f.add(addParams("T-1", `,"idempotency_key":"a"`+deferred)); r.Enqueued || r.EntryID != a.EntryID {
		t.Errorf("replay after the sweep: %+v", r)
	}
}

// §5.4 (7): old-style entries and v2 adds.
func TestV2EnqueueBesideOldStyle(t *testing.T) {
	f := newFixture(t, testConfig{})
	old := f.enqueue("T-1", "")
	r := f.add(addParams("T-1", ""))
	if r.Enqueued || r.EntryID != old || r.Subject.Generation != 1 || r.Warning != liveWarning {
		t.Errorf("old-style pending entry: %+v", r)
	}
	if got := f.listed(); got != "task:T-1:pending" {
		t.Errorf("identified entry listed as %q", got)
	}
	f.enqueue("T-2", "")
	f.h.OK(t, "queue/lease", `{"max":5,"workflow_ids":["w1","w2","w3","w4","w5"]}`, nil) // leases T-2 only
	r = f.add(addParams("T-2", ""))
	if !r.Enqueued || r.Subject.Generation != 1 || r.Warning != "" {
		t.Errorf("old-style assigned entry blocked: %+v", r)
	}
}

// §5.4 (8): refused adds write nothing.
func TestV2EnqueueRefusals(t *testing.T) {
	f := newFixture(t, testConfig{})
	long := strings.Repeat("k", 257)
	tests := []struct{ name, params, msg string }{
		{"subjectless", `{"subject_dispatch":{"requested_at":"2026-06-14T11:00:00Z","trigger_source":"t","workflow_ref":"w"}}`, "generation-fenced enqueue requires a subject"},
		{"blank workflow_ref", `{"subject_dispatch":` + strings.Replace(v2Dispatch("T-1", ""), `"standard"`, `" "`, 1) + `}`, "generation-fenced enqueue requires workflow_ref"},
		{"blank key", addParams("T-1", `,"idempotency_key":"  "`), "idempotency_key must not be empty when present"},
		{"257-char key", addParams("T-1", `,"idempotency_key":"`+long+`"`), "idempotency_key must be a non-empty string of at most 256 characters"},
		{"head_ref main", addParams("T-1", `,"repository":{"repository":"r","base_ref":"refs/heads/main","head_ref":"main"}`), "head_ref must be a safe fully-qualified git ref"},
		{"same refs", addParams("T-1", `,"repository":{"repository":"r","base_ref":"refs/heads/a","head_ref":"refs/heads/a"}`), "repository reservation base_ref and head_ref must differ"},
		{"blank subject id", addParams(" ", ""), "queue subject identity is missing"},
		{"id task:", addParams("task:", ""), "queue subject identity is missing"},
		{"malformed run_at", addParams("T-1", `,"run_at":"soon"`), "run_at must be RFC 3339 (soon): "},
		{"2^63-1 secs", addParams("T-1", `,"expire_after_secs":9223372036854775807`), "expire_after_secs 9223372036854775807 is too large"},
		{"2^64-1 secs", addParams("T-1", `,"expire_after_secs":18446744073709551615`), "is too large: run_at + expire_after_secs must be a valid time"},
		{"2^63-1 secs with run_at", addParams("T-1", `,"run_at":"2026-06-14T12:00:00Z","expire_after_secs":9223372036854775807`), "is too large"},
		{"2^64-1 secs with run_at", addParams("T-1", `,"run_at":"2026-06-14T12:00:00Z","expire_after_secs":18446744073709551615`), "is too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.t = t
			f.wantErr("queue/v2/enqueue", tt.params, -32602, tt.msg, nil)
		})
	}
	f.t = t
	f.want("queue/stats", "", `{"assigned":0,"deferred":0,"held":0,"pending":0,"total":0}`)
}

// §5.4 (9): repository trimmed, deferred run_at echoed verbatim and
// counted as deferred.
func TestV2EnqueueStoresAsGiven(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.addTask("T-1", `,"run_at":"2026-06-14T16:00:00+02:00","repository":{"repository":"  https://github.com/Acme/App.git ","base_ref":" refs/heads/main","head_ref":"refs/heads/animus/T-1 "}`)
	var list struct{ Entries []wire.Entry }
	f.h.OK(t, "queue/list", "", &list)
	if got := list.Entries[0].RunAt; got == nil || *got != "2026-06-14T16:00:00+02:00" {
		t.Errorf("run_at %v", got)
	}
	f.want("queue/stats", "", `{"assigned":0,"deferred":1,"held":0,"pending":1,"total":1}`)
	f.now = t0.Add(3 * time.Hour)
	x := f.leaseOne("d")
	if r := x.Repository; r == nil || *r != (wire.RepositoryReservation{BaseRef: "refs/heads/main", HeadRef: "refs/heads/animus/T-1", Repository: "https://github.com/Acme/App.git"}) {
		t.Errorf("repository %s", mustJSON(r))
	}
}
