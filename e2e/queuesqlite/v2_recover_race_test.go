package queuesqlite

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// leaseAll leases every pending entry for owner through one process,
// batch 5, and returns the fences in hand-out order.
func leaseAll(t *testing.T, p *project, owner string) []queuev2.ExecutionFence {
	t.Helper()
	h := p.spawn07()
	var out []queuev2.ExecutionFence
	for {
		r, err := leaseV2Once(h, owner, 5, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Leased) == 0 {
			break
		}
		for _, fe := range r.Leased {
			out = append(out, fe.Execution)
		}
	}
	e2etest.Shutdown(t, h, fakehost.LadderDaemon)
	return out
}

// waitExpired waits until every fence's lease has run out on the shared
// clock: expiry is a real wait, bounded by the 1–2 s TTL the tests set.
func waitExpired(fs []queuev2.ExecutionFence) {
	var latest time.Time
	for _, f := range fs {
		if f.Expiry().After(latest) {
			latest = f.Expiry()
		}
	}
	time.Sleep(time.Until(latest) + 20*time.Millisecond)
}

// mutateOn sends one ticket mutation on a long-lived process.
func mutateOn(h *fakehost.Host, method string, params map[string]any) (queuev2.MutationResponse, error) {
	var m queuev2.MutationResponse
	err := tryStrict(h, method, params, &m)
	return m, err
}

// TestV2RecoverRace200: two daemons (two processes, two owner ids) race
// queue/v2/lease/recover on the same expired ticket, 200 rounds, a fresh
// expired ticket each round. Exactly one recovery is applied each time,
// with the transition the daemon accepts (owner = winner, generation
// exactly +1); the loser gets stale_fence or lease_still_live. The
// winner's ticket is then the only one that completes.
func TestV2RecoverRace200(t *testing.T) {
	const rounds = 200
	p := newProject(t)
	p.env["ANIMUS_QUEUE_LEASE_TTL_SECS"] = "1"
	began := time.Now()
	seed07(t, p, rounds)
	tickets := leaseAll(t, p, "daemon-dead-"+queuev2.NewUUID())
	if len(tickets) != rounds {
		t.Fatalf("%d tickets leased, want %d", len(tickets), rounds)
	}
	waitExpired(tickets)

	racers := [2]*fakehost.Host{p.spawn07(), p.spawn07()}
	owners := [2]string{"daemon-a-" + queuev2.NewUUID(), "daemon-b-" + queuev2.NewUUID()}
	wins := [2]int{}
	losers := map[string]int{}
	winners := make([]queuev2.ExecutionFence, rounds)
	racing := time.Now()
	for i, ticket := range tickets {
		var answers [2]queuev2.MutationResponse
		var errs [2]error
		start := make(chan struct{})
		var wg sync.WaitGroup
		for r := range 2 {
			wg.Go(func() {
				<-start
				answers[r], errs[r] = mutateOn(racers[r], "queue/v2/lease/recover", map[string]any{"execution": ticket, "new_owner_id": owners[r]})
			})
		}
		close(start)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("round %d: %v / %v", i, errs[0], errs[1])
		}
		w := -1
		for r := range 2 {
			if answers[r].Outcome == "applied" {
				w = r
			}
		}
		if w < 0 || answers[1-w].Outcome == "applied" {
			t.Fatalf("round %d: outcomes %s / %s, want exactly one applied", i, answers[0].Outcome, answers[1].Outcome)
		}
		wins[w]++
		got, err := queuev2.AcceptRecover(answers[w], ticket, owners[w])
		if err != nil {
			t.Fatalf("round %d: the winner's recovery fails the daemon's check: %v", i, err)
		}
		winners[i] = got
		lose := answers[1-w]
		losers[lose.Outcome]++
		switch lose.Outcome {
		case "stale_fence":
		case "lease_still_live":
			if lose.Execution == nil || lose.Execution.Key() != got.Key() {
				t.Errorf("round %d: lease_still_live with %+v, want the winner's fence %s", i, lose.Execution, got.Key())
			}
		default:
			t.Errorf("round %d: the loser got %s %q, want stale_fence or lease_still_live", i, lose.Outcome, lose.ReasonText())
		}
	}
	raced := time.Since(racing)

	// Only the winner's ticket finishes the entry; the dead owner's and
	// the winner's own repeat answer as §3.6–§3.8 say.
	err := fanOut(rounds, 2, func(i int) error {
		h := racers[i%2]
		checks := []struct {
			f       queuev2.ExecutionFence
			outcome string
		}{{tickets[i], "stale_fence"}, {winners[i], "applied"}, {winners[i], "already_applied"}}
		for _, c := range checks {
			m, err := mutateOn(h, "queue/v2/completion", map[string]any{"execution": c.f, "status": "completed"})
			if err != nil || m.Outcome != c.outcome {
				return fmt.Errorf("entry %s completion with %s: %s %v, want %s", c.f.EntryID(), c.f.Key(), m.Outcome, err, c.outcome)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if s := p.stats07(); s != (queueStats{}) {
		t.Errorf("queue/stats at the end: %+v, want an empty queue", s)
	}
	t.Logf("v2 recover race: %d rounds, 2 processes, %v racing (%v in all); wins %d/%d, losers %v",
		rounds, raced.Round(time.Millisecond), time.Since(began).Round(time.Millisecond), wins[0], wins[1], losers)
	if wins[0] == 0 || wins[1] == 0 {
		t.Logf("one process won every round: the race was real but one-sided on this machine")
	}
}
