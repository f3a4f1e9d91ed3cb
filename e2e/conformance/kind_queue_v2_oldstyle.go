package conformance

import (
	"fmt"
	"strings"
	"sync"

	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// Put-back, forged fences, and the old-style surface beside v2
// (queue-v2.md §5.4 19–21; §3.7, §3.10).

// scenarioV2PutBack (19): release_pending makes the entry pending again
// keeping its workflow id; a repeat is already_applied; tickets on a
// pending or held entry are not_assigned; the next lease by another owner
// keeps the workflow id with lease generation 2 and fences out the old.
func scenarioV2PutBack(q *qv2) {
	a := q.enqueueNew(enqReq("TASK-1"), "task:TASK-1", 1)
	f1 := q.leaseOne(uniq("owner"), a.EntryID)
	if r := q.expect("queue/v2/release_pending", putBack(f1, "spawn-deferred"), "applied", ""); r.Execution != nil {
		q.failf("release_pending applied with an execution: %s", r.Execution)
	}
	e := q.status(a.EntryID, "pending")
	if e.AssignedAt != nil || e.WorkflowID == nil || *e.WorkflowID != f1.WorkflowID {
		q.failf("put back entry: assigned_at %v workflow_id %v; want no assigned_at and workflow id %s", e.AssignedAt, e.WorkflowID, f1.WorkflowID)
	}
	q.expect("queue/v2/release_pending", putBack(f1, "spawn-deferred"), "already_applied", "")
	q.expect("queue/v2/lease/renew", renew(f1), "not_assigned", "queue entry is pending")
	q.result("queue/hold", M{"entry_id": a.EntryID}, nil)
	q.expect("queue/v2/lease/renew", renew(f1), "not_assigned", "queue entry is held")
	q.expect("queue/v2/completion", complete(f1, "completed"), "not_assigned", "queue entry is held")
	q.result("queue/release", M{"entry_id": a.EntryID}, nil)

	f2 := q.leaseOne(uniq("owner"), a.EntryID)
	if f2.WorkflowID != f1.WorkflowID || f2.QueueLease.Generation != 2 {
		q.failf("re-lease after put-back: %s; want workflow id %s, lease generation 2", f2, f1.WorkflowID)
	}
	q.expect("queue/v2/lease/renew", renew(f1), "stale_fence", notOwner)
	q.expect("queue/v2/lease/renew", renew(f2), "applied", "")
}

// scenarioV2Forged (20): a fence forged for an old-style assigned entry is
// stale and leaves it alone; invalid ticket requests are -32602.
func scenarioV2Forged(q *qv2) {
	var r struct {
		EntryID string `json:"entry_id"`
	}
	q.result("queue/enqueue", queueDispatch("TASK-1", ""), &r)
	q.result("queue/lease", M{"max": 1, "workflow_ids": []string{"wf-old"}}, nil)
	forged := queuev2.ExecutionFence{Schema: queuev2.FenceSchema, Version: 1, WorkflowID: "wf-old", WorkflowGeneration: 1,
		Subject:    &queuev2.SubjectGeneration{QualifiedID: "task:TASK-1", Generation: 1},
		QueueLease: &queuev2.QueueLeaseFence{EntryID: r.EntryID, OwnerID: "wf-old", Generation: 1, ExpiresAt: "2099-01-01T00:00:00Z"}}
	q.expect("queue/v2/lease/renew", renew(forged), "stale_fence", notOwner)
	q.expect("queue/v2/completion", complete(forged, "completed"), "stale_fence", notOwner)
	q.expect("queue/v2/release_pending", putBack(forged, "r"), "stale_fence", notOwner)
	q.status(r.EntryID, "assigned")

	a := q.enqueueNew(enqReq("TASK-2"), "task:TASK-2", 1)
	f := q.leaseOne(uniq("owner"), a.EntryID)
	noLease := f.Clone()
	noLease.QueueLease = nil
	for _, c := range []struct {
		name, method, msg string
		req               M
	}{
		{"status done", "queue/v2/completion", "queue completion status is not terminal", complete(f, "done")},
		{"blank reason", "queue/v2/release_pending", "reason must not be empty", putBack(f, "  ")},
		{"ttl_secs 0", "queue/v2/lease/renew", "ttl_secs must be greater than zero", M{"execution": f, "ttl_secs": 0}},
		{"recover ttl_secs 0", "queue/v2/lease/recover", "ttl_secs must be greater than zero", M{"execution": f, "new_owner_id": "o", "ttl_secs": 0}},
		{"renew no lease", "queue/v2/lease/renew", "requires queue_lease", renew(noLease)},
		{"recover no lease", "queue/v2/lease/recover", "requires queue_lease", recoverReq(noLease, "o")},
		{"completion no lease", "queue/v2/completion", "requires queue_lease", complete(noLease, "completed")},
		{"put-back no lease", "queue/v2/release_pending", "requires queue_lease", putBack(noLease, "r")},
		{"missing status", "queue/v2/completion", "status", M{"execution": f}},
		{"negative ttl_secs", "queue/v2/lease/renew", "", M{"execution": f, "ttl_secs": -1}},
		{"wrong schema", "queue/v2/lease/renew", "unsupported execution fence schema", renew(withSchema(f, "animus.execution-fence.v2"))},
		{"renew without params", "queue/v2/lease/renew", "missing params for queue/v2/lease/renew", nil},
	} {
		if err := q.catch(func() { q.rpcErr(c.method, c.req, -32602, c.msg) }); err != nil {
			q.failf("%s: %v", c.name, err)
		}
	}
	q.expect("queue/v2/lease/renew", renew(f), "applied", "")
}

func withSchema(f queuev2.ExecutionFence, schema string) queuev2.ExecutionFence {
	g := f.Clone()
	g.Schema = schema
	return g
}

// scenarioV2OldStyle (21): hold/release, drop and old-style completion
// work on ticketed entries and v2 answers stay coherent afterwards;
// old-style lease never takes a ticketed entry (expired or pending);
// mark_assigned and release_pending on one are -32209.
func scenarioV2OldStyle(q *qv2) {
	a := q.enqueueNew(enqReq("TASK-1"), "task:TASK-1", 1)
	q.stats(`{"assigned":0,"deferred":0,"held":0,"pending":1,"total":1}`)
	if err := jsonEqual(q.result("queue/hold", M{"entry_id": a.EntryID}, nil), changed); err != nil {
		q.failf("hold of a ticketed entry: %v", err)
	}
	if err := jsonEqual(q.result("queue/release", M{"entry_id": a.EntryID}, nil), changed); err != nil {
		q.failf("release of a ticketed entry: %v", err)
	}
	q.rpcErr("queue/mark_assigned", M{"entry_id": a.EntryID, "workflow_id": "wf"}, -32209, "use queue/v2/*")

	fa := q.leaseOne(uniq("owner"), a.EntryID)
	q.rpcErr("queue/release_pending", M{"entry_id": a.EntryID, "reason": "r"}, -32209, "use queue/v2/*")
	if err := jsonEqual(q.result("queue/drop", M{"entry_id": a.EntryID}, nil), changed); err != nil {
		q.failf("drop of an assigned ticketed entry: %v", err)
	}
	q.expect("queue/v2/completion", complete(fa, "completed"), "not_assigned", "queue entry is dropped")

	b := q.enqueueNew(enqReq("TASK-2"), "task:TASK-2", 1)
	fb := q.leaseOne(uniq("owner"), b.EntryID)
	if err := jsonEqual(q.result("queue/completion", M{"entry_id": b.EntryID, "status": "completed", "workflow_ref": "standard"}, nil), changed); err != nil {
		q.failf("old-style completion of a ticketed entry: %v", err)
	}
	q.expect("queue/v2/completion", complete(fb, "completed"), "already_applied", "")

	c := q.enqueueNew(enqReq("TASK-3"), "task:TASK-3", 1)
	waitPast(q.ttl("1").leaseOne(uniq("owner"), c.EntryID))
	q.enqueueNew(enqReq("TASK-4"), "task:TASK-4", 1)
	if raw := q.result("queue/lease", M{"max": 5}, nil); !strings.Contains(string(raw), `"leased":[]`) {
		q.failf("old-style lease took a ticketed entry: %s", clip(raw))
	}
}

// scenarioV2ListPaging (21): under a 0.7 host, queue/list pages by default
// (500) and clamps limit to 1..2000, so limit:0 lists one entry. 501
// entries are enqueued by four processes at a time; the clamp at 2000 is
// not exercised (it would take 2001 processes).
func scenarioV2ListPaging(q *qv2) {
	const n = 501
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs <- q.catch(func() {
				for i := w; i < n; i += 4 {
					q.enqueue(enqReq(fmt.Sprintf("TASK-%d", i)))
				}
			})
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			q.failf("%v", err)
		}
	}
	for _, c := range []struct {
		params string
		want   int
	}{{`{}`, 500}, {`{"limit":0}`, 1}, {`{"limit":3000}`, n}, {`{"offset":500}`, 1}} {
		var l queueList
		q.result("queue/list", c.params, &l)
		if len(l.Entries) != c.want || l.Total == nil || *l.Total != n {
			q.failf("list %s: %d entries, total %v; want %d entries, total %d", c.params, len(l.Entries), l.Total, c.want, n)
		}
	}
	q.note = "limit clamp at 2000 not exercised"
}

// scenarioV2Contract: one life cycle as the 0.7 daemon drives it (§4.2–
// §4.5) — add 2, lease 5, renew, renew with ttl 1, complete twice, put
// back, lease by another owner, then a short ticket recovered early and
// late and a stale completion — with the daemon's acceptance rule applied
// to every fence that comes back.
func scenarioV2Contract(q *qv2) {
	long := q.ttl("600")
	a := q.enqueueNew(enqReq("TASK-1", withRepo(repoURL, baseMain, "refs/heads/animus/TASK-1")), "task:TASK-1", 1)
	b := q.enqueueNew(enqReq("TASK-2", withRepo(repoURL, baseMain, "refs/heads/animus/TASK-2")), "task:TASK-2", 1)
	owner1 := uniq("daemon")
	l := long.lease(leaseReq(owner1, uniq("wf"), uniq("wf"), uniq("wf"), uniq("wf"), uniq("wf")))
	if len(l.Leased) != 2 || l.Leased[0].Entry.EntryID != a.EntryID || l.Leased[1].Entry.EntryID != b.EntryID {
		q.failf("lease 5 over 2 entries: %+v", l.Leased)
	}
	fa, fb := l.Leased[0].Execution, l.Leased[1].Execution
	for _, ttl := range []any{nil, 1} {
		req := renew(fa)
		if ttl != nil {
			req["ttl_secs"] = ttl
		}
		r := long.expect("queue/v2/lease/renew", req, "applied", "")
		if r.Execution == nil {
			q.failf("renew applied without an execution")
		}
		if _, err := queuev2.AcceptRenew(r, fa); err != nil {
			q.failf("%v", err)
		}
		fa = *r.Execution
	}
	long.expect("queue/v2/completion", complete(fa, "completed"), "applied", "")
	long.expect("queue/v2/completion", complete(fa, "completed"), "already_applied", "")
	long.expect("queue/v2/release_pending", putBack(fb, "local-fleet-collision"), "applied", "")

	owner2 := uniq("daemon")
	l = long.lease(leaseReq(owner2, uniq("wf"), uniq("wf"), uniq("wf"), uniq("wf"), uniq("wf")))
	if len(l.Leased) != 1 {
		q.failf("lease by the next owner: %+v", l.Leased)
	}
	fb2 := l.Leased[0].Execution
	if err := queuev2.SameIdentity(fb, fb2); err != nil || fb2.QueueLease.Generation != fb.QueueLease.Generation+1 {
		q.failf("re-lease after put-back: %s → %s (%v)", fb, fb2, err)
	}
	long.expect("queue/v2/completion", complete(fb, "completed"), "stale_fence", notOwner)

	c := q.enqueueNew(enqReq("TASK-3"), "task:TASK-3", 1)
	fc := q.ttl("2").leaseOne(owner2, c.EntryID)
	owner3 := uniq("daemon")
	if r := long.expect("queue/v2/lease/recover", recoverReq(fc, owner3), "lease_still_live", ""); r.Execution == nil || r.Execution.String() != fc.String() {
		q.failf("early recover: %v, want the current fence %s", r.Execution, fc)
	}
	waitPast(fc)
	r := long.expect("queue/v2/lease/recover", recoverReq(fc, owner3), "applied", "")
	if r.Execution == nil {
		q.failf("recover applied without an execution")
	}
	if _, err := queuev2.AcceptRecover(r, fc, owner3); err != nil {
		q.failf("%v", err)
	}
	long.expect("queue/v2/completion", complete(fc, "completed"), "stale_fence", notOwner)
	long.expect("queue/v2/completion", complete(*r.Execution, "completed"), "applied", "")
	long.expect("queue/v2/completion", complete(fb2, "completed"), "applied", "")
	q.stats(`{"assigned":0,"deferred":0,"held":0,"pending":0,"total":0}`)
}
