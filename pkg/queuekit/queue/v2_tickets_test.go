package queue

import (
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

const (
	stale   = "stale_fence: execution fence does not own this queue lease"
	expired = "stale_fence: queue lease has expired and requires recovery"
)

// §5.4 (14): renew.
func TestV2Renew(t *testing.T) {
	f := newFixture(t, testConfig{Rules: Rules{TicketTTL: 600 * time.Second}})
	f.addTask("T-1", "")
	x := f.leaseOne("d")
	f.now = f.now.Add(time.Minute)
	tests := []struct {
		name, extra string
		want        time.Time
	}{
		{"default ttl", "", f.now.Add(600 * time.Second)},
		{"ttl 60 keeps the later expiry", `,"ttl_secs":60`, f.now.Add(600 * time.Second)},
		{"ttl above the setting is capped", `,"ttl_secs":99999`, f.now.Add(600 * time.Second)},
	}
	for _, tt := range tests {
		r := f.renewT(x, tt.extra)
		if r.Outcome != wire.OutcomeApplied || r.Execution.QueueLease.ExpiresAt != rustjson.TimeZ(tt.want) {
			t.Errorf("%s: %s", tt.name, mustJSON(r))
		}
		checkTransition(t, x, *r.Execution)
	}
	wrong := x
	ql := *x.QueueLease
	ql.ExpiresAt = "2000-01-01T00:00:00+05:00"
	wrong.QueueLease = &ql
	if r := f.renewT(wrong, ""); r.Outcome != wire.OutcomeApplied {
		t.Errorf("a wrong expires_at must still match: %s", mustJSON(r))
	}
	f.now = f.now.Add(601 * time.Second)
	if r := f.renewT(x, ""); outcome(r) != expired || r.Execution != nil {
		t.Errorf("after expiry: %s", mustJSON(r))
	}
}

// §5.4 (15): recover.
func TestV2Recover(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.addTask("T-1", "")
	x := f.leaseOne("d")
	if r := f.recoverT(x, "e"); r.Outcome != wire.OutcomeLeaseStillLive || mustJSON(r.Execution) != mustJSON(x) {
		t.Errorf("before expiry: %s", mustJSON(r))
	}
	for _, owner := range []string{"d", " d ", " "} {
		f.wantErr("queue/v2/lease/recover", `{"execution":`+mustJSON(x)+`,"new_owner_id":"`+owner+`"}`, -32602,
			"lease recovery requires a different non-empty owner", nil)
	}
	f.now = f.now.Add(DefaultTicketTTL) // expires_at == now: recoverable
	r := f.recoverT(x, " e ")
	if r.Outcome != wire.OutcomeApplied || r.Execution.QueueLease.OwnerID != "e" || r.Execution.QueueLease.Generation != 2 ||
		r.Execution.QueueLease.ExpiresAt != rustjson.TimeZ(f.now.Add(DefaultTicketTTL)) {
		t.Errorf("after expiry: %s", mustJSON(r))
	}
	if got := f.listed(); got != "task:T-1:assigned" {
		t.Errorf("listed %s", got)
	}
}

// §5.4 (16): stale fences.
func TestV2StaleFences(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.addTask("T-1", repoOf("x"))
	x := f.leaseOne("d")
	variants := map[string]func(*wire.ExecutionFence){
		"head ref":            func(v *wire.ExecutionFence) { v.Repository.HeadRef = "refs/heads/y" },
		"workflow generation": func(v *wire.ExecutionFence) { v.WorkflowGeneration = 2 },
		"subject generation":  func(v *wire.ExecutionFence) { v.Subject.Generation = 2 },
		"no repository":       func(v *wire.ExecutionFence) { v.Repository = nil },
		"no subject":          func(v *wire.ExecutionFence) { v.Subject = nil },
	}
	for name, change := range variants {
		v := copyFence(x)
		change(&v)
		if got := outcome(f.renewT(v, "")); got != stale {
			t.Errorf("%s: %s", name, got)
		}
	}
	v := copyFence(x)
	v.Repository.Repository = "HTTPS://github.com/ACME/app.git"
	if got := outcome(f.renewT(v, "")); got != wire.OutcomeApplied {
		t.Errorf("repository case: %s", got)
	}
	f.now = f.now.Add(DefaultTicketTTL + time.Second)
	f.recoverT(x, "e")
	for _, call := range []func() wire.MutationV2Response{
		func() wire.MutationV2Response { return f.renewT(x, "") },
		func() wire.MutationV2Response { return f.completeT(x, "completed") },
		func() wire.MutationV2Response { return f.putBackT(x) },
	} {
		if got := outcome(call()); got != stale {
			t.Errorf("old fence after takeover: %s", got)
		}
	}
}

func copyFence(x wire.ExecutionFence) wire.ExecutionFence {
	v := x
	q, s := *x.QueueLease, *x.Subject
	v.QueueLease, v.Subject = &q, &s
	if x.Repository != nil {
		r := *x.Repository
		v.Repository = &r
	}
	return v
}

// §5.4 (17), (18): completion and what follows it.
func TestV2Completion(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.addTask("T-1", "")
	x := f.leaseOne("d")
	f.now = f.now.Add(DefaultTicketTTL + time.Hour) // expired, not recovered
	if r := f.completeT(x, "failed"); r.Outcome != wire.OutcomeApplied || mustJSON(r.Execution) != mustJSON(x) {
		t.Fatalf("completion: %s", mustJSON(r))
	}
	if f.listed() != "" {
		t.Errorf("still listed: %s", f.listed())
	}
	f.want("queue/stats", "", `{"assigned":0,"deferred":0,"held":0,"pending":0,"total":0}`)
	if r := f.completeT(x, "completed"); r.Outcome != wire.OutcomeAlreadyApplied || mustJSON(r.Execution) != mustJSON(x) {
		t.Errorf("repeat: %s", mustJSON(r))
	}
	stalex := copyFence(x)
	stalex.QueueLease.Generation = 9
	done := "not_assigned: queue entry is done"
	for name, r := range map[string]wire.MutationV2Response{
		"renew": f.renewT(x, ""), "recover": f.recoverT(x, "e"), "put back": f.putBackT(x),
		"stale completion": f.completeT(stalex, "completed"),
	} {
		if outcome(r) != done {
			t.Errorf("%s after completion: %s", name, outcome(r))
		}
	}
	f.addTask("T-2", "")
	y := f.leaseOne("d")
	f.h.OK(t, "queue/drop", `{"entry_id":"`+y.QueueLease.EntryID+`"}`, nil)
	if got := outcome(f.completeT(y, "completed")); got != "not_assigned: queue entry is dropped" {
		t.Errorf("after drop: %s", got)
	}
	unknown := copyFence(y)
	unknown.QueueLease.EntryID = "nope"
	if r := f.completeT(unknown, "completed"); r.Outcome != wire.OutcomeNotFound || r.Reason != "" || r.Execution != nil {
		t.Errorf("unknown entry: %s", mustJSON(r))
	}
}

// §5.4 (18), (19): put-back.
func TestV2PutBack(t *testing.T) {
	f := newFixture(t, testConfig{})
	id := f.addTask("T-1", "")
	x := f.leaseOne("d")
	f.now = f.now.Add(DefaultTicketTTL + time.Second) // expired, not recovered: still accepted
	if r := f.putBackT(x); outcome(r) != wire.OutcomeApplied || r.Execution != nil {
		t.Fatalf("put back: %s", mustJSON(r))
	}
	var list struct{ Entries []wire.Entry }
	f.h.OK(t, "queue/list", "", &list)
	if e := list.Entries[0]; e.Status != "pending" || e.AssignedAt != nil || e.WorkflowID == nil || *e.WorkflowID != x.WorkflowID {
		t.Errorf("after put-back: %s", mustJSON(e))
	}
	if got := f.audit(); got[len(got)-1] != id+" queue/v2/release_pending assigned>pending spawn-deferred" {
		t.Errorf("audit %q", got[len(got)-1])
	}
	if got := outcome(f.putBackT(x)); got != wire.OutcomeAlreadyApplied {
		t.Errorf("repeat: %s", got)
	}
	if got := outcome(f.renewT(x, "")); got != "not_assigned: queue entry is pending" {
		t.Errorf("renew: %s", got)
	}
	f.h.OK(t, "queue/hold", `{"entry_id":"`+id+`"}`, nil)
	if got := outcome(f.renewT(x, "")); got != "not_assigned: queue entry is held" {
		t.Errorf("renew held: %s", got)
	}
	f.h.OK(t, "queue/release", `{"entry_id":"`+id+`"}`, nil)
	y := f.leaseOne("e")
	if y.WorkflowID != x.WorkflowID || y.QueueLease.Generation != 2 {
		t.Errorf("re-lease: %s", mustJSON(y))
	}
	if got := outcome(f.renewT(x, "")); got != stale {
		t.Errorf("old fence: %s", got)
	}
}

// §5.4 (20): forged fences and invalid requests.
func TestV2ForgedAndInvalid(t *testing.T) {
	f := newFixture(t, testConfig{})
	old := f.enqueue("T-1", "")
	f.h.OK(t, "queue/lease", `{"max":1,"workflow_ids":["w"]}`, nil)
	forged := wire.ExecutionFence{Schema: wire.FenceSchema, Version: 1, WorkflowID: "w", WorkflowGeneration: 1,
		Subject:    &wire.SubjectGeneration{Generation: 1, QualifiedID: "task:T-1"},
		QueueLease: &wire.QueueLeaseFence{EntryID: old, OwnerID: "w", Generation: 1, ExpiresAt: "2030-01-01T00:00:00Z"}}
	if got := outcome(f.completeT(forged, "completed")); got != stale {
		t.Errorf("forged: %s", got)
	}
	if got := f.listed(); got != "T-1:assigned" {
		t.Errorf("old-style entry touched: %s", got)
	}
	noLease := forged
	noLease.QueueLease = nil
	for _, tt := range []struct{ method, params, msg string }{
		{"queue/v2/completion", `{"execution":` + mustJSON(forged) + `,"status":"done"}`, "queue completion status is not terminal"},
		{"queue/v2/release_pending", `{"execution":` + mustJSON(forged) + `,"reason":" "}`, "queue release-pending reason must not be empty"},
		{"queue/v2/lease/renew", `{"execution":` + mustJSON(forged) + `,"ttl_secs":0}`, "lease renewal ttl_secs must be greater than zero"},
		{"queue/v2/lease/renew", `{"execution":` + mustJSON(noLease) + `}`, "queue-backed execution fence requires queue_lease"},
	} {
		f.wantErr(tt.method, tt.params, -32602, tt.msg, nil)
	}
}
