package conformance

import (
	"fmt"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// Concurrency scenarios (queue-v2.md §5.4 22–24): separate OS processes on
// one database file, as several daemon ticks, CLI calls and triggers run
// against one project.

// parallel runs n workers and fails the scenario with the first failure.
func (q *qv2) parallel(n int, worker func(i int)) {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = q.catch(func() { worker(i) })
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			q.failf("worker %d: %v", i, err)
		}
	}
}

// drain leases with max batch until a call hands out nothing.
func (q *qv2) drain(owner string, batch int) []queuev2.FencedQueueEntry {
	var out []queuev2.FencedQueueEntry
	for {
		wfs := make([]string, batch)
		for i := range wfs {
			wfs[i] = uniq("wf")
		}
		l := q.lease(leaseReq(owner, wfs...))
		if len(l.Leased) == 0 {
			return out
		}
		out = append(out, l.Leased...)
	}
}

// handedOutOnce checks every id was leased exactly once with lease
// generation 1, and no two hand-outs share a fence.
func (q *qv2) handedOutOnce(ids []string, got []queuev2.FencedQueueEntry) {
	seen, fences := map[string]int{}, map[string]bool{}
	for _, fe := range got {
		seen[fe.Entry.EntryID]++
		if fe.Execution.QueueLease.Generation != 1 {
			q.failf("entry %s handed out with lease generation %d", fe.Entry.EntryID, fe.Execution.QueueLease.Generation)
		}
		key := fe.Execution.String()
		if fences[key] {
			q.failf("fence handed out twice: %s", key)
		}
		fences[key] = true
	}
	for _, id := range ids {
		if seen[id] != 1 {
			q.failf("entry %s handed out %d times", id, seen[id])
		}
	}
	if len(got) != len(ids) {
		q.failf("%d hand-outs for %d entries", len(got), len(ids))
	}
}

// scenarioV2ConcurrentLease (22): six processes lease in a loop over 36
// entries; each entry is handed out exactly once, all with generation 1.
func scenarioV2ConcurrentLease(q *qv2) {
	var ids []string
	for i := 0; i < 36; i++ {
		ids = append(ids, q.enqueue(enqReq(fmt.Sprintf("TASK-%d", i))).EntryID)
	}
	var mu sync.Mutex
	var got []queuev2.FencedQueueEntry
	q.parallel(6, func(i int) {
		leased := q.drain(uniq("owner"), 1+i%5)
		mu.Lock()
		got = append(got, leased...)
		mu.Unlock()
	})
	q.handedOutOnce(ids, got)
}

// scenarioV2ConcurrentEnqueue (23): eight concurrent adds of one subject
// with distinct keys make one entry (one enqueued:true, counter 1); eight
// of one key make one entry and identical receipts.
func scenarioV2ConcurrentEnqueue(q *qv2) {
	for _, sameKey := range []bool{false, true} {
		task := map[bool]string{false: "TASK-KEYS", true: "TASK-ONE-KEY"}[sameKey]
		receipts := make([]queuev2.EnqueueResponse, 8)
		q.parallel(8, func(i int) {
			key := fmt.Sprintf("%s-k%d", task, i)
			if sameKey {
				key = task + "-k"
			}
			receipts[i] = q.enqueue(enqReq(task, withKey(key)))
		})
		created := 0
		for _, r := range receipts {
			if r.Enqueued {
				created++
			}
			if r.EntryID != receipts[0].EntryID || r.Subject != (queuev2.SubjectGeneration{QualifiedID: "task:" + task, Generation: 1}) {
				q.failf("%s: receipts differ: %+v", task, receipts)
			}
			if sameKey && r.Warning != nil {
				q.failf("%s: a same-key replay warned: %+v", task, r)
			}
		}
		if created != 1 {
			q.failf("%s: %d adds answered enqueued:true, want exactly 1", task, created)
		}
		f := q.leaseOne(uniq("owner"), receipts[0].EntryID)
		q.expect("queue/v2/completion", complete(f, "completed"), "applied", "")
		next := q.enqueueNew(enqReq(task), "task:"+task, 2) // the counter was 1
		q.result("queue/drop", M{"entry_id": next.EntryID}, nil)
	}
}

// scenarioV2Races (24): renew and recover at the expiry instant never both
// apply; completion and drop racing leave one winner and the §3.8 answer;
// enqueues during leases are neither lost nor doubled.
func scenarioV2Races(q *qv2) {
	applied := 0
	for round := 0; round < 4; round++ {
		e := q.enqueue(enqReq(fmt.Sprintf("TASK-R%d", round)))
		f := q.ttl("1").leaseOne(uniq("owner"), e.EntryID)
		// Aim both calls at the expiry instant, allowing for process start.
		time.Sleep(time.Until(f.Expiry()) - 40*time.Millisecond)
		var ren, rec queuev2.MutationResponse
		q.ttl("1").parallel(2, func(i int) {
			if i == 0 {
				q.result("queue/v2/lease/renew", renew(f), &ren)
			} else {
				q.result("queue/v2/lease/recover", recoverReq(f, uniq("owner")), &rec)
			}
		})
		switch {
		case ren.Outcome == "applied" && rec.Outcome == "lease_still_live":
			applied++
		case rec.Outcome == "applied" && ren.Outcome == "stale_fence":
			applied++
		case rec.Outcome == "lease_still_live" && ren.Outcome == "stale_fence":
			// Recover ran before the instant and renew after it: both
			// refusals are right; the race simply had no winner.
		default:
			q.failf("round %d: renew %q, recover %q", round, ren.Outcome, rec.Outcome)
		}
	}
	if applied == 0 {
		q.note = "renew/recover: no round had a winner (both landed on either side of the expiry)"
	}

	for round := 0; round < 3; round++ {
		e := q.enqueue(enqReq(fmt.Sprintf("TASK-D%d", round)))
		f := q.leaseOne(uniq("owner"), e.EntryID)
		var done queuev2.MutationResponse
		var drop queueMutation
		q.parallel(2, func(i int) {
			if i == 0 {
				q.result("queue/v2/completion", complete(f, "completed"), &done)
			} else {
				q.result("queue/drop", M{"entry_id": e.EntryID}, &drop)
			}
		})
		okDone := done.Outcome == "applied" && drop.NotFound && !drop.Changed
		okDrop := drop.Changed && done.Outcome == "not_assigned" && done.Reason != nil && *done.Reason == "queue entry is dropped"
		if !okDone && !okDrop {
			q.failf("completion vs drop: completion %+v, drop %+v", done, drop)
		}
	}

	var mu sync.Mutex
	var ids []string
	var got []queuev2.FencedQueueEntry
	q.parallel(5, func(i int) {
		if i < 3 {
			for j := 0; j < 7; j++ {
				id := q.enqueue(enqReq(fmt.Sprintf("TASK-E%d-%d", i, j))).EntryID
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			}
			return
		}
		owner := uniq("owner")
		for k := 0; k < 6; k++ {
			l := q.drain(owner, 2)
			mu.Lock()
			got = append(got, l...)
			mu.Unlock()
		}
	})
	got = append(got, q.drain(uniq("owner"), 5)...)
	q.handedOutOnce(ids, got)
}

type queueMutation struct {
	Changed  bool `json:"changed"`
	NotFound bool `json:"not_found"`
}
