package durablepostgres

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/ledger"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// maxRestarts bounds the restarts of TestFaultPostgresRestart.
const maxRestarts = 20

// TestFaultPostgresRestart: the several-hosts run (race, kills, recovery)
// on a private cluster, restarted (pg_ctl restart -m fast) while the
// tenth kill round's driver is in the middle of its steps. pgkit rides
// out a short outage inside one call (a few attempts within about 300
// ms), so the cluster is restarted again, up to maxRestarts times, until
// a call has answered -32304: calls during the outage must answer -32304
// with data.retryable true (any other answer fails the lane), the
// drivers retry them, and the run ends as TestSeveralHosts does: nothing
// acknowledged lost, nothing committed twice, a retried commit
// acknowledging the first outcome.
func TestFaultPostgresRestart(t *testing.T) {
	// A private cluster: restarting the shared one would fail every other
	// package's tests running at the same time.
	c := pgtest.Own(t)
	s := pgns.Durable.In(t, c.DSN)
	severalHosts(t, s, &fault{what: "pg_ctl restart -m fast", round: 10, do: func(l *ledger.Ledger) string {
		n := 0
		for n < maxRestarts && total(l.Retries()) == 0 {
			c.Restart(t)
			n++
			time.Sleep(50 * time.Millisecond)
		}
		if total(l.Retries()) == 0 {
			t.Errorf("%d restarts during the driver's steps and no call answered -32304: every call rode out the outage", n)
		}
		return fmt.Sprintf("%d restart(s)", n)
	}})
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestFaultTerminateInCommit: the plugin's backend is terminated with
// pg_terminate_backend while its commit_step transaction waits for the
// namespace lock, which the test holds from another session so that the
// commit can be seen inside its transaction (pg_stat_activity:
// application_name animus-durable-postgres, waiting on the advisory
// lock). The commit either happened once (pgkit's retry after the lost
// connection) or answers -32304 and did not happen; either way a retried
// commit_step, with another output, acknowledges and never commits twice:
// query_run, from another host, shows the step once with the first
// outcome.
func TestFaultTerminateInCommit(t *testing.T) {
	for _, every := range []bool{false, true} {
		name := map[bool]string{false: "once", true: "every-attempt"}[every]
		t.Run(name, func(t *testing.T) {
			s := pgns.Durable.New(t)
			declared := e2etest.Declared(t, binaryName)
			a := newHost(t, "host-a", s, declared, nil)
			b := newHost(t, "host-b", s, declared, nil)
			ctx := context.Background()
			p := a.start()
			p.beginRun("term", "p")
			var r beginResult
			p.must("durable/begin_step", stepParams("term", "p", "s", "k"), &r)
			if r.Status != "new" {
				t.Fatalf("begin_step: %+v", r)
			}
			first := json.RawMessage(`{"attempt":"first"}`)

			c := pgtest.Connect(t, s.DSN)
			if _, err := c.Exec(ctx, `SELECT pg_advisory_lock($1::int4, hashtext($2))`, int32(durableLockClass), s.Schema); err != nil {
				t.Fatal(err)
			}
			locked := true
			unlock := func() {
				if locked {
					locked = false
					if _, err := c.Exec(ctx, `SELECT pg_advisory_unlock($1::int4, hashtext($2))`, int32(durableLockClass), s.Schema); err != nil {
						t.Error(err)
					}
				}
			}
			defer unlock()

			type answer struct {
				rpcErr *fakehost.RPCError
				err    error
				ack    bool
			}
			done := make(chan answer, 1)
			go func() {
				var a answer
				var out struct {
					Ack bool `json:"ack"`
				}
				a.rpcErr, a.err = p.call("durable/commit_step", map[string]any{"step_id": r.StepID, "outcome": "success", "output": first}, &out)
				a.ack = out.Ack
				done <- a
			}()
			waiting := func() int32 {
				var pid int32
				if err := c.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
					WHERE application_name = $1 AND backend_type = 'client backend'
					AND wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%pg_advisory_xact_lock%'
					AND xact_start IS NOT NULL LIMIT 1`, pgns.Durable.Binary).Scan(&pid); err != nil {
					return 0
				}
				return pid
			}
			var killed []int32
			var ans answer
			deadline := time.Now().Add(90 * time.Second) // a hang detector, not a timing assertion
		watch:
			for {
				select {
				case ans = <-done:
					break watch
				default:
				}
				if time.Now().After(deadline) {
					unlock()
					ans = <-done
					break watch
				}
				pid := waiting()
				if pid == 0 {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				var terminated bool
				if err := c.QueryRow(ctx, `SELECT pg_terminate_backend($1, 5000)`, pid).Scan(&terminated); err != nil || !terminated {
					t.Fatalf("pg_terminate_backend(%d): %v %v", pid, terminated, err)
				}
				killed = append(killed, pid)
				if !every {
					unlock()
					ans = <-done
					break watch
				}
			}
			unlock()
			if ans.err != nil {
				t.Fatalf("commit_step: %v\n--- wire log ---\n%s", ans.err, p.h.WireLog())
			}
			if len(killed) == 0 {
				t.Fatalf("no %s backend ever waited for the namespace lock inside its commit_step transaction (answer %v)\n--- wire log ---\n%s\n--- stderr ---\n%s",
					binaryName, ans.rpcErr, p.h.WireLog(), p.h.Stderr())
			}
			v := b.start()
			var outcome string
			switch {
			case ans.rpcErr == nil && ans.ack:
				outcome = "acknowledged (pgkit's retry committed it)"
				if every {
					t.Errorf("commit_step acknowledged although every attempt's backend was terminated while the test held the lock\n%s", p.h.WireLog())
				}
			case ans.rpcErr != nil && retryable(ans.rpcErr):
				outcome = fmt.Sprintf("answered -32304 retryable (%s)", ans.rpcErr.Message)
				// Not happened: still reserved, nothing committed.
				if steps := v.query("term", "p"); len(steps) != 0 {
					t.Errorf("commit_step answered -32304, yet query_run from another host shows %+v", steps)
				}
				inflight := v.recover(0)
				if len(inflight) != 1 || len(inflight[0].ReplayState.Outstanding) != 1 || inflight[0].ReplayState.Outstanding[0].StepID != r.StepID {
					t.Errorf("commit_step answered -32304, yet recover_in_flight shows %+v, want the reservation %s", inflight, r.StepID)
				}
				var ack struct {
					Ack bool `json:"ack"`
				}
				p.must("durable/commit_step", map[string]any{"step_id": r.StepID, "outcome": "success", "output": first}, &ack)
				if !ack.Ack {
					t.Errorf("the retried commit after -32304: ack false")
				}
			default:
				t.Fatalf("commit_step with its backend terminated answered %v (ack %v), want an ack or -32304 with data.retryable true\n--- wire log ---\n%s",
					ans.rpcErr, ans.ack, p.h.WireLog())
			}
			// A retry, from another host, with another output: acknowledged,
			// and the first outcome stays.
			var ack struct {
				Ack bool `json:"ack"`
			}
			v.must("durable/commit_step", map[string]any{"step_id": r.StepID, "outcome": "success", "output": json.RawMessage(`{"attempt":"retry"}`)}, &ack)
			if !ack.Ack {
				t.Errorf("retried commit_step from another host: ack false")
			}
			steps := v.query("term", "p")
			if len(steps) != 1 || steps[0].StepID != r.StepID || string(steps[0].Output) != string(first) {
				t.Errorf("query_run after the retries: %+v, want the step %s once with %s", steps, r.StepID, first)
			}
			if left := v.recover(0); len(left) != 0 {
				t.Errorf("recover_in_flight after the commit: %+v", left)
			}
			v.shutdown()
			p.shutdown()
			t.Logf("%s: %d backend(s) terminated (first %d) while waiting for the namespace lock inside commit_step's transaction; the commit %s; the step is committed once with the first outcome",
				name, len(killed), killed[0], outcome)
		})
	}
}
