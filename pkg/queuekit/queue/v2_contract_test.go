package queue

import (
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// checkTransition asserts the daemon's rules (queue-v2.md §4.3, §4.4) on a
// fence returned for prev: same entry, immutable identity unchanged; the
// same owner keeps the lease generation and never gets an earlier expiry;
// another owner gets exactly generation + 1.
func checkTransition(t *testing.T, prev, next wire.ExecutionFence) {
	t.Helper()
	if next.QueueLease == nil || prev.QueueLease == nil || next.QueueLease.EntryID != prev.QueueLease.EntryID {
		t.Fatalf("entry changed: %+v → %+v", prev.QueueLease, next.QueueLease)
	}
	if next.WorkflowID != prev.WorkflowID || next.WorkflowGeneration != prev.WorkflowGeneration ||
		mustJSON(next.Subject) != mustJSON(prev.Subject) || mustJSON(next.Repository) != mustJSON(prev.Repository) {
		t.Errorf("identity changed: %s → %s", mustJSON(prev), mustJSON(next))
	}
	p, n := prev.QueueLease, next.QueueLease
	if n.OwnerID == p.OwnerID {
		pe, _ := rustjson.ParseTime(p.ExpiresAt)
		ne, _ := rustjson.ParseTime(n.ExpiresAt)
		if n.Generation != p.Generation || ne.Before(pe) {
			t.Errorf("same owner: generation %d → %d, expiry %s → %s", p.Generation, n.Generation, p.ExpiresAt, n.ExpiresAt)
		}
	} else if n.Generation != p.Generation+1 {
		t.Errorf("new owner: generation %d → %d, want +1", p.Generation, n.Generation)
	}
}

// validFenced is FencedQueueEntry::validate plus the coding checks the
// daemon runs on every leased item.
func validFenced(t *testing.T, item wire.FencedEntry, owner string) {
	t.Helper()
	x := item.Execution
	if err := x.ValidateQueueBacked(); err != nil {
		t.Fatalf("fence: %v", err)
	}
	if x.Subject == nil || x.QueueLease.EntryID != item.Entry.EntryID || item.Entry.WorkflowID == nil ||
		*item.Entry.WorkflowID != x.WorkflowID || item.Entry.SubjectID != x.Subject.QualifiedID ||
		x.QueueLease.OwnerID != owner || item.Entry.Status != wire.StatusAssigned {
		t.Errorf("inconsistent fenced entry %s", mustJSON(item))
	}
}

// TestDaemonRuleContract replays a whole life cycle and checks every
// returned fence against the daemon's transition rules.
func TestDaemonRuleContract(t *testing.T) {
	f := newFixture(t, testConfig{})
	repo := `,"repository":{"repository":"https://github.com/acme/app.git","base_ref":"refs/heads/main","head_ref":"refs/heads/animus/T-1"}`
	f.addTask("T-1", repo)
	f.addTask("T-2", "")
	lease := f.leaseV2(5, "daemon-a")
	if len(lease.Leased) != 2 {
		t.Fatalf("lease 5 of 2: %+v", lease)
	}
	for _, item := range lease.Leased {
		validFenced(t, item, "daemon-a")
	}
	a, b := lease.Leased[0].Execution, lease.Leased[1].Execution
	if a.Repository == nil || b.Repository != nil || a.QueueLease.Generation != 1 || a.WorkflowGeneration != 1 {
		t.Errorf("fences %s %s", mustJSON(a), mustJSON(b))
	}
	if want := rustjson.TimeZ(t0.Add(DefaultTicketTTL)); a.QueueLease.ExpiresAt != want {
		t.Errorf("expires_at %s, want %s", a.QueueLease.ExpiresAt, want)
	}

	f.now = f.now.Add(time.Minute)
	r := f.renewT(a, "")
	checkTransition(t, a, *r.Execution)
	a2 := *r.Execution
	r = f.renewT(a2, `,"ttl_secs":1`)
	if r.Outcome != wire.OutcomeApplied || r.Execution.QueueLease.ExpiresAt != a2.QueueLease.ExpiresAt {
		t.Errorf("renew with ttl 1 moved expiry: %s", mustJSON(r))
	}
	checkTransition(t, a2, *r.Execution)

	if r = f.completeT(a2, "completed"); r.Outcome != wire.OutcomeApplied {
		t.Fatalf("complete: %s", mustJSON(r))
	}
	checkTransition(t, a2, *r.Execution)
	if r = f.completeT(a2, "failed"); r.Outcome != wire.OutcomeAlreadyApplied {
		t.Errorf("complete again: %s", mustJSON(r))
	}
	checkTransition(t, a2, *r.Execution)

	if r = f.putBackT(b); r.Outcome != wire.OutcomeApplied || r.Execution != nil {
		t.Errorf("put back: %s", mustJSON(r))
	}
	b2 := f.leaseOne("daemon-b")
	checkTransition(t, b, b2)

	// Short TTL: early recover, late recover, stale completion.
	f.s.rules.TicketTTL = 10 * time.Second
	b3 := *f.renewT(b2, "").Execution
	checkTransition(t, b2, b3)
	if r = f.recoverT(b3, "daemon-c"); r.Outcome != wire.OutcomeLeaseStillLive || mustJSON(r.Execution) != mustJSON(b3) {
		t.Errorf("early recover: %s", mustJSON(r))
	}
	f.now = f.now.Add(DefaultTicketTTL + time.Second)
	r = f.recoverT(b3, "daemon-c")
	if r.Outcome != wire.OutcomeApplied {
		t.Fatalf("late recover: %s", mustJSON(r))
	}
	checkTransition(t, b3, *r.Execution)
	if got := outcome(f.completeT(b3, "completed")); got != "stale_fence: execution fence does not own this queue lease" {
		t.Errorf("stale completion: %s", got)
	}
	if r = f.completeT(*r.Execution, "completed"); r.Outcome != wire.OutcomeApplied {
		t.Errorf("completion by the new owner: %s", mustJSON(r))
	}
}
