package conformance

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// queue/v2/lease scenarios (queue-v2.md §5.4 10–13; semantics §3.5).

// scenarioV2LeaseFence (10): a coding entry's hand-out carries the full
// fence — generations 1, the workflow id sent, the owner, the trimmed
// reservation, an expiry of now + 1800 s by default — and a valid
// FencedQueueEntry (checked by q.lease for every hand-out).
func scenarioV2LeaseFence(q *qv2) {
	r := q.enqueueNew(enqReq("TASK-1", withRepo(repoURL, baseMain, "refs/heads/animus/TASK-1")), "task:TASK-1", 1)
	owner, wf := uniq("owner"), uniq("wf")
	start := time.Now()
	l := q.lease(leaseReq(owner, wf))
	if len(l.Leased) != 1 || len(l.Blocked) != 0 {
		q.failf("lease: %+v, want one hand-out", l)
	}
	f := l.Leased[0].Execution
	if err := f.Validate(queuev2.Coding); err != nil {
		q.failf("not a valid coding fence: %v", err)
	}
	want := queuev2.ExecutionFence{Schema: queuev2.FenceSchema, Version: 1, WorkflowID: wf, WorkflowGeneration: 1,
		Subject:    &queuev2.SubjectGeneration{QualifiedID: "task:TASK-1", Generation: 1},
		QueueLease: &queuev2.QueueLeaseFence{EntryID: r.EntryID, OwnerID: owner, Generation: 1, ExpiresAt: f.QueueLease.ExpiresAt},
		Repository: &queuev2.RepositoryReservation{Repository: repoURL, BaseRef: baseMain, HeadRef: "refs/heads/animus/TASK-1"}}
	if !reflect.DeepEqual(f, want) {
		q.failf("fence %s, want %s", f, want)
	}
	if !strings.HasSuffix(f.QueueLease.ExpiresAt, "Z") {
		q.failf("expires_at %q is not UTC with Z", f.QueueLease.ExpiresAt)
	}
	if err := expiryNear(f, start, 1800*time.Second); err != nil {
		q.failf("default TTL: %v", err)
	}
}

// scenarioV2LeaseTTL (10): ANIMUS_QUEUE_LEASE_TTL_SECS is honoured when it
// is 1..=604800 after trimming and ignored (1800) otherwise.
func scenarioV2LeaseTTL(q *qv2) {
	var wrong []string // every value is tried, so one run names them all
	for i, c := range []struct {
		env  string
		want time.Duration
	}{
		{"120", 120 * time.Second}, {" 604800 ", 604800 * time.Second}, {"30s", 1800 * time.Second},
		{"0", 1800 * time.Second}, {"-5", 1800 * time.Second}, {"604801", 1800 * time.Second}, {"junk", 1800 * time.Second},
	} {
		// A project each: a value that breaks one call leaves nothing
		// behind for the next.
		p := q.fresh()
		r := p.enqueueNew(enqReq(fmt.Sprintf("TASK-%d", i)), fmt.Sprintf("task:TASK-%d", i), 1)
		err := q.catch(func() {
			start := time.Now()
			f := p.ttl(c.env).leaseOne(uniq("owner"), r.EntryID)
			if err := expiryNear(f, start, c.want); err != nil {
				q.failf("%v", err)
			}
		})
		if err != nil {
			wrong = append(wrong, fmt.Sprintf("%s=%q: %v", EnvLeaseTTL, c.env, err))
		}
	}
	if len(wrong) > 0 {
		q.failf("%s", strings.Join(wrong, "; "))
	}
}

// scenarioV2LeaseErrors (10): six pending → the first five leased with the
// workflow ids in order; every invalid lease is -32602 and changes
// nothing.
func scenarioV2LeaseErrors(q *qv2) {
	var ids []string
	for i := 1; i <= 6; i++ {
		ids = append(ids, q.enqueueNew(enqReq(fmt.Sprintf("TASK-%d", i)), fmt.Sprintf("task:TASK-%d", i), 1).EntryID)
	}
	owner := uniq("owner")
	valid := queuev2.ExecutionFence{Schema: queuev2.FenceSchema, Version: 1, WorkflowID: "wf-x", WorkflowGeneration: 1}
	bad := valid.Clone()
	bad.Schema = "animus.execution-fence.v0"
	zero := valid.Clone()
	zero.WorkflowGeneration = 0
	// msg is a part of the crate's (or [default]'s) message (§2.8).
	for _, c := range []struct {
		name, msg string
		req       M
	}{
		{"max 6", "max 1..5", leaseReq(owner, "w1", "w2", "w3", "w4", "w5", "w6")},
		{"max 0", "max must be greater than zero", leaseReq(owner)},
		{"blank owner", "owner_id must not be empty", leaseReq("  ", "w1")},
		{"count mismatch", "workflow_ids length 1 did not match max 2", M{"max": 2, "owner_id": owner, "workflow_ids": []string{"w1"}}},
		{"duplicate ids", "workflow_ids must be non-empty and unique", leaseReq(owner, "w1", "w1")},
		{"blank id", "workflow_ids must be non-empty and unique", leaseReq(owner, "w1", " ")},
		{"bad exclude", "unsupported execution fence schema", M{"max": 1, "owner_id": owner, "workflow_ids": []string{"w1"}, "exclude": []any{bad}}},
		{"zero generation", "must be greater than zero", M{"max": 1, "owner_id": owner, "workflow_ids": []string{"w1"}, "exclude": []any{zero}}},
		{"negative max", "", M{"max": -1, "owner_id": owner, "workflow_ids": []string{}}},
		{"max as float", "", M{"max": 1.5, "owner_id": owner, "workflow_ids": []string{"w1"}}},
		{"workflow_ids null", "", M{"max": 1, "owner_id": owner, "workflow_ids": nil}},
	} {
		if err := q.catch(func() { q.rpcErr("queue/v2/lease", c.req, -32602, c.msg) }); err != nil {
			q.failf("%s: %v", c.name, err)
		}
	}
	q.stats(`{"assigned":0,"deferred":0,"held":0,"pending":6,"total":6}`)

	wfs := []string{uniq("wf"), uniq("wf"), uniq("wf"), uniq("wf"), uniq("wf")}
	l := q.lease(leaseReq(owner, wfs...))
	if len(l.Leased) != 5 {
		q.failf("leased %d, want 5", len(l.Leased))
	}
	for i, fe := range l.Leased {
		if fe.Entry.EntryID != ids[i] || fe.Execution.WorkflowID != wfs[i] || fe.Execution.QueueLease.Generation != 1 {
			q.failf("hand-out %d: entry %s workflow %s lease gen %d; want %s, %s, 1 (queue order, ids in order)",
				i, fe.Entry.EntryID, fe.Execution.WorkflowID, fe.Execution.QueueLease.Generation, ids[i], wfs[i])
		}
	}
	q.status(ids[5], "pending")
}

// scenarioV2LeaseSkips (11): held and future-deferred entries are skipped,
// an expired ticket is neither leased nor blocked, and an exclude fence of
// the same subject generation blocks (another generation does not).
func scenarioV2LeaseSkips(q *qv2) {
	held := q.enqueueNew(enqReq("TASK-1"), "task:TASK-1", 1)
	q.result("queue/hold", M{"entry_id": held.EntryID}, nil)
	q.enqueueNew(enqReq("TASK-2", withField("run_at", time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339))), "task:TASK-2", 1)
	live := q.enqueueNew(enqReq("TASK-3"), "task:TASK-3", 1)
	f := q.ttl("1").leaseOne(uniq("owner"), live.EntryID)
	waitPast(f)
	for _, max := range []int{1, 5} {
		wfs := make([]string, max)
		for i := range wfs {
			wfs[i] = uniq("wf")
		}
		if l := q.lease(leaseReq(uniq("owner"), wfs...)); len(l.Leased)+len(l.Blocked) != 0 {
			q.failf("lease over held, deferred and an expired ticket: %+v, want nothing leased or blocked", l)
		}
	}

	d := q.enqueueNew(enqReq("TASK-4"), "task:TASK-4", 1)
	active := queuev2.ExecutionFence{Schema: queuev2.FenceSchema, Version: 1, WorkflowID: "wf-elsewhere", WorkflowGeneration: 1,
		Subject: &queuev2.SubjectGeneration{QualifiedID: "task:TASK-4", Generation: 1}}
	req := leaseReq(uniq("owner"), uniq("wf"))
	req["exclude"] = []queuev2.ExecutionFence{active}
	l := q.lease(req)
	if len(l.Leased) != 0 || len(l.Blocked) != 1 || l.Blocked[0].EntryID != d.EntryID || l.Blocked[0].Reason != "subject_generation_active" ||
		l.Blocked[0].ConflictsWith == nil || !reflect.DeepEqual(*l.Blocked[0].ConflictsWith, active) {
		q.failf("exclude of the same subject generation: %+v, want %s blocked subject_generation_active by %s", l, d.EntryID, active)
	}
	other := active.Clone()
	other.Subject.Generation = 2
	req = leaseReq(uniq("owner"), uniq("wf"))
	req["exclude"] = []queuev2.ExecutionFence{other}
	l = q.lease(req)
	if len(l.Leased) != 1 || l.Leased[0].Execution.QueueLease.Generation != 1 {
		q.failf("exclude of another generation blocked the entry or moved its lease generation: %+v", l)
	}
}

// scenarioV2Collisions (12): a repository/head-ref collision blocks via an
// exclude fence (repository in other case), via an assigned entry, and
// within one call; a free entry behind 50 blocked ones waits.
func scenarioV2Collisions(q *qv2) {
	head := "refs/heads/animus/shared"
	a := q.enqueueNew(enqReq("TASK-1", withRepo(repoURL, baseMain, head)), "task:TASK-1", 1)
	excl := queuev2.ExecutionFence{Schema: queuev2.FenceSchema, Version: 1, WorkflowID: "wf-elsewhere", WorkflowGeneration: 1,
		Subject:    &queuev2.SubjectGeneration{QualifiedID: "task:OTHER", Generation: 1},
		Repository: &queuev2.RepositoryReservation{Repository: strings.ToUpper(repoURL), BaseRef: "refs/heads/dev", HeadRef: head}}
	req := leaseReq(uniq("owner"), uniq("wf"))
	req["exclude"] = []queuev2.ExecutionFence{excl}
	q.wantBlocked(q.lease(req), a.EntryID, "repository_ref_collision", excl)

	fa := q.leaseOne(uniq("owner"), a.EntryID)
	b := q.enqueueNew(enqReq("TASK-2", withRepo(repoURL, baseMain, head)), "task:TASK-2", 1)
	q.wantBlocked(q.lease(leaseReq(uniq("owner"), uniq("wf"))), b.EntryID, "repository_ref_collision", fa)

	q.expect("queue/v2/completion", complete(fa, "completed"), "applied", "")
	c := q.enqueueNew(enqReq("TASK-3", withRepo(repoURL, baseMain, head)), "task:TASK-3", 1)
	l := q.lease(leaseReq(uniq("owner"), uniq("wf"), uniq("wf")))
	if len(l.Leased) != 1 || l.Leased[0].Entry.EntryID != b.EntryID {
		q.failf("within one call: leased %+v, want only %s", l.Leased, b.EntryID)
	}
	q.wantBlocked(queuev2.LeaseResponse{Blocked: l.Blocked}, c.EntryID, "repository_ref_collision", l.Leased[0].Execution)

	// 49 more behind c on the running branch, then a free entry: the
	// candidate window of a max-1 call is 50, so the free one waits.
	for i := 0; i < 49; i++ {
		q.enqueueNew(enqReq(fmt.Sprintf("TASK-B%d", i), withRepo(repoURL, baseMain, head)), fmt.Sprintf("task:TASK-B%d", i), 1)
	}
	free := q.enqueueNew(enqReq("TASK-FREE", withRepo(repoURL, baseMain, "refs/heads/animus/free")), "task:TASK-FREE", 1)
	l = q.lease(leaseReq(uniq("owner"), uniq("wf")))
	if len(l.Leased) != 0 || len(l.Blocked) != 50 {
		q.failf("behind 50 blocked: leased %d blocked %d, want 0 and 50", len(l.Leased), len(l.Blocked))
	}
	q.status(free.EntryID, "pending")
}

// wantBlocked: exactly one block, of entry for reason, conflicting with
// the fence given (the whole fence, expiry included).
func (q *qv2) wantBlocked(l queuev2.LeaseResponse, entryID, reason string, with queuev2.ExecutionFence) {
	if len(l.Leased) != 0 || len(l.Blocked) != 1 {
		q.failf("lease: leased %d blocked %+v, want only %s blocked (%s)", len(l.Leased), l.Blocked, entryID, reason)
	}
	b := l.Blocked[0]
	if b.EntryID != entryID || b.Reason != reason || b.ConflictsWith == nil || !reflect.DeepEqual(*b.ConflictsWith, with) {
		q.failf("blocked %s %s conflicts_with %v; want %s %s conflicts_with %s", b.EntryID, b.Reason, b.ConflictsWith, entryID, reason, with)
	}
}
