package queue

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// Unit-level stand-ins for §5.4 (22)–(24): several services, each with its
// own store handle (its own *sql.DB) on one file, called at once. The e2e
// suite runs the same with separate OS processes.

// peers returns n more services on f's project, sharing f's clock.
func (f *fixture) peers(n int) []*fixture {
	f.t.Helper()
	out := make([]*fixture, n)
	for i := range out {
		g := &fixture{t: f.t, dir: f.dir, now: f.now}
		g.s = New(f.cfg.options(f.t, Options{Now: func() time.Time { return g.now }}))
		if err := g.serve(bound(rootBinding(f.dir))); err != nil {
			f.t.Fatal(err)
		}
		out[i] = g
	}
	return out
}

// call is h.Call decoding the result, safe off the test goroutine.
func call[T any](g *fixture, method, params string) (T, error) {
	var v T
	raw, err := g.h.Call(method, params)
	if err == nil {
		err = json.Unmarshal(raw, &v)
	}
	return v, err
}

func TestV2ConcurrentLeases(t *testing.T) {
	f := newFixture(t, testConfig{})
	for i := range 40 {
		f.addTask(fmt.Sprintf("T-%d", i), "")
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for n, g := range f.peers(4) {
		wg.Go(func() {
			for round := 0; ; round++ {
				p := fmt.Sprintf(`{"max":3,"owner_id":"d%d","workflow_ids":["w%d-%d-a","w%d-%d-b","w%d-%d-c"]}`, n, n, round, n, round, n, round)
				r, err := call[wire.LeaseV2Response](g, "queue/v2/lease", p)
				if err != nil {
					t.Error(err)
					return
				}
				if len(r.Leased) == 0 {
					return
				}
				mu.Lock()
				for _, item := range r.Leased {
					seen[item.Entry.EntryID]++
					if item.Execution.QueueLease.Generation != 1 {
						t.Errorf("lease generation %d", item.Execution.QueueLease.Generation)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 40 {
		t.Errorf("%d entries handed out, want 40", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s handed out %d times", id, n)
		}
	}
}

func TestV2ConcurrentAdds(t *testing.T) {
	f := newFixture(t, testConfig{})
	for _, sameKey := range []bool{false, true} {
		task := fmt.Sprintf("T-%v", sameKey)
		var wg sync.WaitGroup
		results := make(chan wire.EnqueueV2Response, 8)
		for n, g := range f.peers(8) {
			key := fmt.Sprintf("k-%s-%d", task, n)
			if sameKey {
				key = "k-" + task
			}
			wg.Go(func() {
				r, err := call[wire.EnqueueV2Response](g, "queue/v2/enqueue", addParams(task, `,"idempotency_key":"`+key+`"`))
				if err != nil {
					t.Error(err)
				}
				results <- r
			})
		}
		wg.Wait()
		close(results)
		enqueued, ids := 0, map[string]bool{}
		for r := range results {
			if r.Enqueued {
				enqueued++
			}
			ids[r.EntryID] = true
			if r.Subject.Generation != 1 {
				t.Errorf("generation %d", r.Subject.Generation)
			}
		}
		if enqueued != 1 || len(ids) != 1 {
			t.Errorf("same key %v: %d enqueued, %d entries", sameKey, enqueued, len(ids))
		}
	}
	f.want("queue/stats", "", `{"assigned":0,"deferred":0,"held":0,"pending":2,"total":2}`)
}

// Renew against recover at the expiry instant, completion against drop:
// exactly one wins each time.
func TestV2ConcurrentTicketRaces(t *testing.T) {
	f := newFixture(t, testConfig{})
	peers := f.peers(2)
	for round := range 10 {
		f.addTask(fmt.Sprintf("R-%d", round), "")
		x := f.leaseOne("d")
		at, _ := time.Parse(time.RFC3339Nano, x.QueueLease.ExpiresAt)
		for _, g := range peers {
			g.now = at // the expiry instant: renew refuses, recover may go
		}
		fence := mustJSON(x)
		var wg sync.WaitGroup
		outcomes := make([]string, 2)
		wg.Go(func() {
			r, _ := call[wire.MutationV2Response](peers[0], "queue/v2/lease/renew", `{"execution":`+fence+`}`)
			outcomes[0] = r.Outcome
		})
		wg.Go(func() {
			r, _ := call[wire.MutationV2Response](peers[1], "queue/v2/lease/recover", `{"execution":`+fence+`,"new_owner_id":"e"}`)
			outcomes[1] = r.Outcome
		})
		wg.Wait()
		if (outcomes[0] == wire.OutcomeApplied) == (outcomes[1] == wire.OutcomeApplied) {
			t.Errorf("renew/recover: %v", outcomes)
		}
		f.h.OK(t, "queue/drop", `{"entry_id":"`+x.QueueLease.EntryID+`"}`, nil)
	}
	for round := range 10 {
		f.addTask(fmt.Sprintf("C-%d", round), "")
		x := f.leaseOne("d")
		var wg sync.WaitGroup
		var completion wire.MutationV2Response
		var drop wire.MutationResponse
		wg.Go(func() {
			completion, _ = call[wire.MutationV2Response](peers[0], "queue/v2/completion", `{"execution":`+mustJSON(x)+`,"status":"completed"}`)
		})
		wg.Go(func() {
			drop, _ = call[wire.MutationResponse](peers[1], "queue/drop", `{"entry_id":"`+x.QueueLease.EntryID+`"}`)
		})
		wg.Wait()
		applied := completion.Outcome == wire.OutcomeApplied
		if applied == drop.Changed || (!applied && completion.Reason != "queue entry is dropped") {
			t.Errorf("completion %+v, drop %+v", completion, drop)
		}
	}
}
