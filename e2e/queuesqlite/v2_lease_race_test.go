package queuesqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// Concurrency proofs for queue/v2 (issue 15, queue-v2.md §5.4 items
// 22–24): separate OS processes, one SQLite file. Processes here are long
// lived so that the contention is between processes on the database, not
// between process start-ups; each acts for one daemon (owner id).

// fanOut runs fn(i) for i in [0, n) on lanes goroutines and returns every
// error, joined.
func fanOut(n, lanes int, fn func(i int) error) error {
	var next atomic.Int64
	errs := make([]error, n)
	var wg sync.WaitGroup
	for range lanes {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = fn(i)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// seed07 enqueues n v2 entries (subjects TASK-0 … TASK-n-1, key seed-i)
// through one 0.7 process, eight requests in flight, and returns their
// entry ids by index.
func seed07(t *testing.T, p *project, n int) []string {
	t.Helper()
	h := p.spawn07()
	ids := make([]string, n)
	err := fanOut(n, 8, func(i int) error {
		var r queuev2.EnqueueResponse
		params := map[string]any{"idempotency_key": fmt.Sprintf("seed-%d", i), "subject_dispatch": map[string]any{
			"requested_at": "2026-12-03T09:00:00Z", "subject": map[string]any{"Task": map[string]any{"id": fmt.Sprintf("TASK-%d", i)}},
			"trigger_source": "manual-queue-enqueue", "workflow_ref": "standard"}}
		if err := tryStrict(h, "queue/v2/enqueue", params, &r); err != nil || !r.Enqueued {
			return fmt.Errorf("seed %d: %v %+v", i, err, r)
		}
		ids[i] = r.EntryID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e2etest.Shutdown(t, h, fakehost.LadderDaemon)
	return ids
}

// leaseV2Once sends one daemon-shaped queue/v2/lease on h (exclude omitted
// when empty) and checks every item as the daemon would.
func leaseV2Once(h *fakehost.Host, owner string, max int, exclude []queuev2.ExecutionFence) (queuev2.LeaseResponse, error) {
	params, ids := leaseParams(owner, max, exclude)
	var r queuev2.LeaseResponse
	if err := tryStrict(h, "queue/v2/lease", params, &r); err != nil {
		return r, err
	}
	if r.Leased == nil {
		return r, fmt.Errorf("queue/v2/lease: no leased array")
	}
	for _, fe := range r.Leased {
		if err := acceptLeased(fe, owner, ids, ""); err != nil {
			return r, err
		}
	}
	return r, nil
}

// TestV2FourProcessesLease2000: four processes, each a daemon with its own
// owner id, lease with queue/v2/lease (batch 1–5, the daemon's range) in a
// loop until the queue answers nothing. Every entry is handed out exactly
// once, at lease generation 1, and every fence (entry, owner, generation)
// and workflow id is unique.
func TestV2FourProcessesLease2000(t *testing.T) {
	const n, workers = 2000, 4
	p := newProject(t)
	began := time.Now()
	ids := seed07(t, p, n)
	seeded := time.Since(began)

	hosts := make([]*fakehost.Host, workers)
	owners := make([]string, workers)
	for w := range hosts {
		hosts[w], owners[w] = p.spawn07(), "daemon-"+queuev2.NewUUID()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make([][]queuev2.ExecutionFence, workers)
	calls := make([]int, workers)
	// An empty answer means the queue had nothing pending when that lease
	// committed. Entries never return to pending here, so a lease sent
	// after some process's empty answer arrived must come back empty too.
	emptyAt, lastFullSent := make([]time.Time, workers), make([]time.Time, workers)
	leasing := time.Now()
	err := fanOut(workers, workers, func(w int) error {
		for round := 0; ctx.Err() == nil; round++ {
			// The daemon excludes the fences it tracks: here the batch
			// before, still running.
			var running []queuev2.ExecutionFence
			if k := len(got[w]); k > 0 {
				running = got[w][max(0, k-5):]
			}
			sent := time.Now()
			r, err := leaseV2Once(hosts[w], owners[w], 1+(round+w)%5, running)
			calls[w]++
			if err != nil {
				return fmt.Errorf("process %d round %d: %w", w, round, err)
			}
			if len(r.Blocked) > 0 {
				return fmt.Errorf("process %d: blocked %+v with no excludes and no repositories", w, r.Blocked)
			}
			if len(r.Leased) == 0 {
				emptyAt[w] = time.Now()
				return nil
			}
			lastFullSent[w] = sent
			for _, fe := range r.Leased {
				got[w] = append(got[w], fe.Execution)
			}
		}
		return ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(leasing)
	for a := range workers {
		for b := range workers {
			if lastFullSent[b].After(emptyAt[a]) {
				t.Errorf("process %d got an empty lease while entries were still pending: process %d leased some with a call sent %v later",
					a, b, lastFullSent[b].Sub(emptyAt[a]))
			}
		}
	}

	byEntry := map[string]queuev2.ExecutionFence{}
	fences, workflows := map[string]bool{}, map[string]bool{}
	for w, fs := range got {
		if len(fs) == 0 {
			t.Errorf("process %d leased nothing: the processes did not run side by side", w)
		}
		for _, f := range fs {
			if prev, dup := byEntry[f.EntryID()]; dup {
				t.Errorf("entry %s handed out twice: %s and %s", f.EntryID(), prev.Key(), f.Key())
			}
			byEntry[f.EntryID()] = f
			if fences[f.Key()] || workflows[f.WorkflowID] {
				t.Errorf("fence %s or workflow %s not unique", f.Key(), f.WorkflowID)
			}
			fences[f.Key()], workflows[f.WorkflowID] = true, true
			if f.QueueLease.Generation != 1 || f.Subject.Generation != 1 {
				t.Errorf("entry %s: lease generation %d, subject generation %d; want 1, 1", f.EntryID(), f.QueueLease.Generation, f.Subject.Generation)
			}
		}
	}
	for i, id := range ids {
		if _, ok := byEntry[id]; !ok {
			t.Errorf("entry %d (%s) never handed out", i, id)
		}
	}
	if s := p.stats07(); s != (queueStats{Total: n, Assigned: n}) {
		t.Errorf("queue/stats after the race: %+v, want all %d assigned", s, n)
	}
	t.Logf("v2 lease race: %d entries seeded through queue/v2/enqueue in %v; %d processes leased them in %v with %v lease calls "+
		"(entries per process %d/%d/%d/%d); %d unique fences", n, seeded.Round(time.Millisecond), workers, elapsed.Round(time.Millisecond),
		calls, len(got[0]), len(got[1]), len(got[2]), len(got[3]), len(fences))
}
