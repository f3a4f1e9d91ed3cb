package queue

import (
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// §5.4 (25): a failure between the statements of one call leaves nothing
// behind. The fail-point is a trigger that aborts the call's last write,
// after the sweep, the insert, the generation bump (enqueue) or the
// identity and state changes (lease) already ran in the transaction.
func TestV2FailPointRollsBack(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.enqueue("OLD", "") // old-style: gets identity at its first v2 hand-out
	f.rawExec(backendSQL(
		`CREATE TRIGGER failpoint_bind BEFORE INSERT ON idempotency_bindings BEGIN SELECT RAISE(ABORT, 'killed'); END`,
		`CREATE FUNCTION failpoint() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'killed'; END $$;
		CREATE TRIGGER failpoint_bind BEFORE INSERT ON idempotency_bindings FOR EACH ROW EXECUTE FUNCTION failpoint()`))
	f.rawExec(backendSQL(
		`CREATE TRIGGER failpoint_lease BEFORE INSERT ON audit WHEN NEW.method = 'queue/v2/lease' BEGIN SELECT RAISE(ABORT, 'killed'); END`,
		`CREATE TRIGGER failpoint_lease BEFORE INSERT ON audit FOR EACH ROW WHEN (NEW.method = 'queue/v2/lease')
		EXECUTE FUNCTION failpoint()`))
	f.wantErr("queue/v2/enqueue", addParams("T-1", `,"idempotency_key":"k"`), -32603, "queue/v2/enqueue failed", nil)
	f.wantErr("queue/v2/lease", f.leaseParams(1, "d"), -32603, "queue/v2/lease failed", nil)
	if got := f.listed(); got != "OLD:pending" {
		t.Errorf("partial state after failures: %q", got)
	}
	f.rawExec(backendSQL(`DROP TRIGGER failpoint_bind`, `DROP TRIGGER failpoint_bind ON idempotency_bindings`))
	f.rawExec(backendSQL(`DROP TRIGGER failpoint_lease`, `DROP TRIGGER failpoint_lease ON audit`))

	// Reopen (the migration is idempotent) and check the invariants: the
	// generation counter was not consumed, the key was not bound.
	f.s.Close(t.Context())
	if r := f.add(addParams("T-1", `,"idempotency_key":"k"`)); !r.Enqueued || r.Subject.Generation != 1 {
		t.Errorf("after the failed add: %+v", r)
	}
	r := f.leaseV2(2, "d")
	if len(r.Leased) != 2 || r.Leased[0].Execution.Subject.Generation != 1 || r.Leased[0].Execution.QueueLease.Generation != 1 {
		t.Errorf("after the failed lease: %s", mustJSON(r))
	}
	f.checkCounts()
}

// §5.4 (26): lost replies.
func TestV2LostReplies(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.addTask("T-1", "")
	lost := f.leaseOne("d") // the daemon never sees this reply
	f.now = f.now.Add(DefaultTicketTTL + time.Hour)
	if r := f.leaseV2(5, "d2"); len(r.Leased) != 0 || len(r.Blocked) != 0 {
		t.Errorf("an expired ticket was re-leased or reported: %s", mustJSON(r))
	}
	if got := f.listed(); got != "task:T-1:assigned" {
		t.Errorf("listed %s", got)
	}
	// The operator's way out: drop and enqueue again (next generation).
	f.h.OK(t, "queue/drop", `{"entry_id":"`+lost.QueueLease.EntryID+`"}`, nil)
	if r := f.add(addParams("T-1", "")); !r.Enqueued || r.Subject.Generation != 2 {
		t.Errorf("re-enqueue: %+v", r)
	}
}

// §5.4 (28): lowering the TTL between renewals never moves expiry back.
func TestV2RenewNeverShortens(t *testing.T) {
	f := newFixture(t, testConfig{Rules: Rules{TicketTTL: time.Hour}})
	f.addTask("T-1", "")
	x := f.leaseOne("d")
	f.now = f.now.Add(time.Minute)
	first := f.renewT(x, "")
	f.s.rules.TicketTTL = time.Minute
	f.now = f.now.Add(time.Second)
	second := f.renewT(*first.Execution, "")
	if second.Outcome != wire.OutcomeApplied || second.Execution.QueueLease.ExpiresAt != first.Execution.QueueLease.ExpiresAt {
		t.Errorf("renew after lowering the TTL: %s → %s", mustJSON(first), mustJSON(second))
	}
	if want := rustjson.TimeZ(t0.Add(time.Minute + time.Hour)); first.Execution.QueueLease.ExpiresAt != want {
		t.Errorf("first renewal %s, want %s", first.Execution.QueueLease.ExpiresAt, want)
	}
}
