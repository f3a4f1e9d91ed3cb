package durablesqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

// TestEightProcessesRaceBeginStep is the concurrency proof: eight
// plugin processes on one project call begin_step on the same 500 keys at
// the same moment, each committing at once whenever it wins. Exactly one
// caller may get "new" per key; every other answer must be "in_progress"
// naming the winner's step, or "already_committed" serving the winner's
// output. Afterwards query_run holds each key once, with the winner's output.
func TestEightProcessesRaceBeginStep(t *testing.T) {
	const procs, keys, lanes = 8, 500, 4
	pr := newProject(t)
	var ps []*proc
	epochs := map[uint64]bool{}
	for range procs {
		p := pr.start()
		epochs[p.beginRun("race", "implement")] = true // each registers the run, as a retried phase would
		ps = append(ps, p)
	}
	if len(epochs) != procs {
		t.Fatalf("%d begin_workflow_run calls gave %d distinct epochs", procs, len(epochs))
	}

	type answer struct {
		proc int
		beginResult
	}
	var mu sync.Mutex
	answers := make([][]answer, keys)
	winners := make([]string, keys)   // step id of the "new"
	committed := make([][]byte, keys) // output the winner committed
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, p := range ps {
		// Several lanes per process keep its queue full; half the processes
		// walk the keys backwards so races happen from both ends too.
		for lane := range lanes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for n := lane; n < keys; n += lanes {
					k := n
					if i%2 == 1 {
						k = keys - 1 - n
					}
					var r beginResult
					if rpcErr, err := p.call("durable/begin_step", stepParams("race", "implement", fmt.Sprint(k), fmt.Sprintf("scope:race:implement:%d", k)), &r); err != nil || rpcErr != nil {
						t.Errorf("process %d key %d: %v %v", i, k, err, rpcErr)
						return
					}
					mu.Lock()
					answers[k] = append(answers[k], answer{i, r})
					mu.Unlock()
					if r.Status != "new" {
						continue
					}
					out, _ := json.Marshal(map[string]any{"key": k, "winner": i})
					if rpcErr, err := p.call("durable/commit_step", map[string]any{"step_id": r.StepID, "outcome": "success", "output": json.RawMessage(out)}, nil); err != nil || rpcErr != nil {
						t.Errorf("process %d commit key %d: %v %v", i, k, err, rpcErr)
						return
					}
					mu.Lock()
					winners[k], committed[k] = r.StepID, out
					mu.Unlock()
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}

	stats := map[string]int{}
	for k, as := range answers {
		news := 0
		for _, a := range as {
			stats[a.Status]++
			switch a.Status {
			case "new":
				news++
			case "in_progress":
				if a.StepID != winners[k] || a.ExpiresAt == "" {
					t.Errorf("key %d: in_progress %+v, the winner is %s", k, a, winners[k])
				}
			case "already_committed":
				if a.StepID != winners[k] || !bytes.Equal(a.PriorOutput, committed[k]) {
					t.Errorf("key %d: already_committed %s %s, the winner committed %s %s", k, a.StepID, a.PriorOutput, winners[k], committed[k])
				}
			default:
				t.Errorf("key %d: process %d got %s", k, a.proc, a.Status)
			}
		}
		if news != 1 || len(as) != procs {
			t.Errorf("key %d: %d answers, %d of them new; want %d answers, exactly 1 new", k, len(as), news, procs)
		}
	}
	t.Logf("%d begin_step calls: %v", procs*keys, stats)

	steps := ps[0].query("race", "implement")
	if len(steps) != keys {
		t.Fatalf("query_run has %d steps, want %d", len(steps), keys)
	}
	seen := map[string]bool{}
	for _, s := range steps {
		var k int
		if _, err := fmt.Sscanf(s.IdempotencyKey, "scope:race:implement:%d", &k); err != nil || seen[s.IdempotencyKey] {
			t.Fatalf("query_run step %+v: duplicate or foreign key", s)
		}
		seen[s.IdempotencyKey] = true
		if s.StepID != winners[k] || !bytes.Equal(s.Output, committed[k]) {
			t.Errorf("key %d: recorded %s %s, the winner committed %s %s", k, s.StepID, s.Output, winners[k], committed[k])
		}
	}
	if runs := ps[procs-1].recover(0); len(runs) != 0 {
		t.Errorf("recover_in_flight after every commit: %+v", runs)
	}
	for _, p := range ps {
		p.shutdown()
	}
}
