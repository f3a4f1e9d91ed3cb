package conformance

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// Crash and durability scenarios (queue-v2.md §5.4 25–28), done from
// outside the process: SIGKILL of real plugin processes at random points
// of a call or right after its reply. A fail-point between two statements
// of one transaction and a power cut cannot be injected from outside; the
// nearest faithful versions are random kills during calls (25) and kills
// before any clean close (27). synchronous=FULL itself is invisible to a
// black-box client.

// killed returns a view of the project whose calls end with SIGKILL.
func (q *qv2) killed() *qv2 {
	p := *q.p
	p.kill = true
	return &qv2{ctx: q.ctx, p: &p}
}

// killDuring sends one request and SIGKILLs the process after delay,
// whatever it was doing; it reports whether the reply had come.
func (q *qv2) killDuring(method string, params any, delay time.Duration) (replied bool) {
	h, init, err := q.p.spawn(q.ctx)
	if err != nil {
		q.failf("%v", err)
	}
	if _, err := RequireGenerationFencedQueue(init); err != nil {
		q.failf("%v", err)
	}
	done := make(chan bool, 1)
	go func() {
		resp, err := h.Call(q.ctx, method, json.RawMessage(encodeParams(params)))
		done <- err == nil && resp != nil
	}()
	time.Sleep(delay)
	if err := h.Kill(); err != nil {
		q.failf("kill: %v", err)
	}
	return <-done
}

// killStorm alternates leases and keyed adds, each SIGKILLed after a
// different short delay (a call takes a few milliseconds), and returns the
// keys of the adds and how many kills came before the reply.
func (q *qv2) killStorm(owner string, n int) (keys []string, early int) {
	for i := 0; i < n; i++ {
		delay := time.Duration(i%9) * 500 * time.Microsecond
		method, params := "queue/v2/lease", leaseReq(owner, uniq("wf"), uniq("wf"))
		if i%2 == 1 {
			key := fmt.Sprintf("kill-%d", i)
			keys = append(keys, key)
			method, params = "queue/v2/enqueue", enqReq("TASK-"+key, withKey(key))
		}
		if !q.killDuring(method, params, delay) {
			early++
		}
	}
	return keys, early
}

// scenarioV2KillMidCall (25): processes migrate one new database at once;
// then leases and keyed adds are SIGKILLed at random points. Afterwards
// every add happened once or not at all (its replay says which), every
// entry is pending or assigned, and an entry whose lease reply died is
// never handed out again.
func scenarioV2KillMidCall(q *qv2) {
	q.parallel(4, func(int) { q.stats(`{"assigned":0,"deferred":0,"held":0,"pending":0,"total":0}`) })
	var ids []string
	for i := 0; i < 12; i++ {
		ids = append(ids, q.enqueue(enqReq(fmt.Sprintf("TASK-%d", i))).EntryID)
	}
	const kills = 24
	keys, early := q.killStorm(uniq("owner"), kills)
	// Evidence that the kills did interrupt calls (a fast machine could
	// answer every call before its kill).
	q.note = fmt.Sprintf("%d of %d kills landed before the reply", early, kills)
	for _, key := range keys {
		r := q.enqueue(enqReq("TASK-"+key, withKey(key)))
		if r.Subject != (queuev2.SubjectGeneration{QualifiedID: "task:TASK-" + key, Generation: 1}) || r.Warning != nil {
			q.failf("replay of %s after a kill: %+v", key, r)
		}
		ids = append(ids, r.EntryID)
	}
	listed := q.listed()
	if len(listed) != len(ids) {
		q.failf("%d entries listed, want %d (an add was lost or doubled)", len(listed), len(ids))
	}
	var pending []string
	for _, id := range ids {
		switch listed[id].Status {
		case "pending":
			pending = append(pending, id)
		case "assigned":
		default:
			q.failf("entry %s is %q after the kills", id, listed[id].Status)
		}
	}
	q.handedOutOnce(pending, q.drain(uniq("owner"), 5))
	q.stats(fmt.Sprintf(`{"assigned":%d,"deferred":0,"held":0,"pending":0,"total":%d}`, len(ids), len(ids)))
}

// scenarioV2LostReplies (26): a completion whose reply was lost replays as
// already_applied; a lease whose reply was lost leaves the entry assigned,
// never re-leased or reported, also after expiry, until queue/drop and a
// new add (generation 2).
func scenarioV2LostReplies(q *qv2) {
	a := q.enqueueNew(enqReq("TASK-1"), "task:TASK-1", 1)
	f := q.leaseOne(uniq("owner"), a.EntryID)
	q.killed().expect("queue/v2/completion", complete(f, "completed"), "applied", "")
	if r := q.expect("queue/v2/completion", complete(f, "completed"), "already_applied", ""); r.Execution == nil || r.Execution.String() != f.String() {
		q.failf("retried completion: %v, want already_applied with %s", r.Execution, f)
	}

	b := q.enqueueNew(enqReq("TASK-2"), "task:TASK-2", 1)
	lost := q.ttl("1").killed().lease(leaseReq(uniq("owner"), uniq("wf")))
	if len(lost.Leased) != 1 {
		q.failf("lease: %+v", lost)
	}
	q.status(b.EntryID, "assigned")
	for _, wait := range []bool{false, true} {
		if wait {
			waitPast(lost.Leased[0].Execution)
		}
		if l := q.lease(leaseReq(uniq("owner"), uniq("wf"), uniq("wf"))); len(l.Leased)+len(l.Blocked) != 0 {
			q.failf("entry with a lost lease reply (expired %v): %+v, want nothing leased or blocked", wait, l)
		}
	}
	q.result("queue/drop", M{"entry_id": b.EntryID}, nil)
	q.enqueueNew(enqReq("TASK-2"), "task:TASK-2", 2)
}

// scenarioV2Durability (27): with every process SIGKILLed right after its
// reply, everything a reply reported is there for the next process, and
// subject counters survive all entries finishing.
func scenarioV2Durability(q *qv2) {
	k := q.killed()
	var fences []queuev2.ExecutionFence
	for i := 0; i < 3; i++ {
		r := k.enqueueNew(enqReq(fmt.Sprintf("TASK-%d", i), withKey(fmt.Sprintf("k%d", i))), fmt.Sprintf("task:TASK-%d", i), 1)
		fences = append(fences, k.leaseOne(uniq("owner"), r.EntryID))
	}
	k.expect("queue/v2/completion", complete(fences[0], "completed"), "applied", "")
	k.expect("queue/v2/completion", complete(fences[1], "failed"), "applied", "")
	k.result("queue/drop", M{"entry_id": fences[2].QueueLease.EntryID}, nil)
	q.stats(`{"assigned":0,"deferred":0,"held":0,"pending":0,"total":0}`)
	for i := 0; i < 3; i++ {
		k.enqueueNew(enqReq(fmt.Sprintf("TASK-%d", i)), fmt.Sprintf("task:TASK-%d", i), 2)
		k.enqueueSame(enqReq(fmt.Sprintf("TASK-%d", i), withKey(fmt.Sprintf("k%d", i))),
			queuev2.EnqueueResponse{EntryID: fences[i].QueueLease.EntryID,
				Subject: queuev2.SubjectGeneration{QualifiedID: fmt.Sprintf("task:TASK-%d", i), Generation: 1}}, "")
	}
	q.expect("queue/v2/completion", complete(fences[0], "cancelled"), "already_applied", "")
	q.note = "power loss and synchronous=FULL cannot be observed from outside; SIGKILL after each committed reply instead"
}

// scenarioV2TTLLowered (28): lowering ANIMUS_QUEUE_LEASE_TTL_SECS between
// two renewals never moves the expiry back.
func scenarioV2TTLLowered(q *qv2) {
	a := q.enqueueNew(enqReq("TASK-1"), "task:TASK-1", 1)
	f := q.ttl("600").leaseOne(uniq("owner"), a.EntryID)
	for _, ttl := range []string{"600", "60", "1", ""} {
		r := q.ttl(ttl).expect("queue/v2/lease/renew", renew(f), "applied", "")
		if _, err := queuev2.AcceptRenew(r, f); err != nil {
			q.failf("renew with %s=%q: %v", EnvLeaseTTL, ttl, err)
		}
		f = *r.Execution
	}
}
