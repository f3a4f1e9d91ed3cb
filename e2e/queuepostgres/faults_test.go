package queuepostgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgproxy"
	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// Fault tests: the drain of the several-hosts test with PostgreSQL
// restarted, a backend terminated inside a transaction, and the network
// cut (before and after a COMMIT) by a proxy. Each ends as that test
// does: every entry handed out by a lease at most once and completed
// exactly once. Calls during a fault may answer -32205 (retried after a
// pause); any other error fails. A lease whose answer was lost leaves its
// entry assigned for good (queue-v2.md §5.4 item 26): after the TTL the
// daemon that sent it recovers it with the ticket it can rebuild
// (reconcile), never by leasing it again.

// faultTTL is the v2 lease length in the fault tests, so lost leases
// expire within the test.
const faultTTL = 2 * time.Second

// faultN is the entry count of the fault drains.
const faultN = 300

func faultEnv(extra ...string) map[string]string {
	env := map[string]string{"ANIMUS_QUEUE_LEASE_TTL_SECS": fmt.Sprint(int(faultTTL / time.Second))}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return env
}

// faultDrain seeds faultN entries, drains them with four hosts while
// fault runs once a third is completed, reconciles lost leases and
// verifies the end state. fault runs on the test goroutine.
func faultDrain(t *testing.T, q pgns.NS, f *fleet, what string, fault func()) {
	t.Helper()
	ctx := context.Background()
	hosts := f.hosts(4)
	ids, subjects, err := f.seed(ctx, hosts[0].dir, "FAULT", faultN)
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(subjects)
	began := time.Now()
	result := make(chan error, 1)
	go func() { result <- drainHosts(ctx, hosts, l, drainOptions{retriable: true, deadline: 5 * time.Minute}) }()

	var drainErr error
	faulted := false
	tick := time.NewTicker(5 * time.Millisecond)
wait:
	for {
		select {
		case drainErr = <-result:
			break wait
		case <-tick.C:
			if !faulted && l.done.Load() >= faultN/3 {
				faulted = true
				at := l.done.Load()
				fault()
				t.Logf("%s: injected with %d of %d entries completed, %v into the drain", what, at, faultN, time.Since(began).Round(time.Millisecond))
			}
		}
	}
	tick.Stop()
	if drainErr != nil {
		t.Fatal(drainErr)
	}
	if !faulted {
		t.Fatalf("%s: the drain finished before the fault was injected", what)
	}
	reconciler := f.hosts(1)[0]
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	recovered, err := reconcileLost(rctx, reconciler, l, faultTTL)
	if err != nil {
		t.Error(err)
	}
	verifyDrained(t, ctx, reconciler, l, ids)
	t.Logf("%s: %d entries drained by 4 hosts in %v with %d per-call processes; -32205 answers: %s; "+
		"%d lost lease answers recovered after the TTL and completed once", what, faultN, time.Since(began).Round(time.Millisecond),
		l.calls.Load(), l.retrySummary(), recovered)
}

// TestFaultPostgresRestart (a): pg_ctl restart -m fast in the middle of a
// four-host drain. Calls during the outage answer -32205 and are retried;
// none hangs (each is bounded by perCallBudget); the drain completes.
func TestFaultPostgresRestart(t *testing.T) {
	// A private cluster: restarting the shared one would fail every other
	// package's tests running at the same time.
	c := pgtest.Own(t)
	q := pgns.Queue.In(t, c.DSN)
	f := newFleet(t, q, "", faultEnv())
	faultDrain(t, q, f, "pg_ctl restart -m fast", func() {
		began := time.Now()
		c.Restart(t)
		t.Logf("restart took %v", time.Since(began).Round(time.Millisecond))
	})
}

// TestFaultTerminateBackend (b): the plugin's backend is terminated with
// pg_terminate_backend while its transaction waits for the namespace
// lock, which the test holds from another session so the transaction can
// be seen (pg_stat_activity: application_name animus-queue-postgres,
// waiting on the advisory lock). The call answers -32205 or succeeds on
// pgkit's retry; nothing was committed by the terminated attempt, so no
// entry is handed out twice and every entry completes once.
func TestFaultTerminateBackend(t *testing.T) {
	cases := []struct {
		method string
		every  bool // terminate every attempt, holding the lock, until the call answers
	}{
		{"queue/v2/lease", false}, {"queue/v2/lease", true},
		{"queue/v2/completion", false}, {"queue/v2/completion", true},
	}
	for _, tc := range cases {
		method := tc.method
		name := method[len("queue/v2/"):] + map[bool]string{false: "/once", true: "/every-attempt"}[tc.every]
		t.Run(name, func(t *testing.T) {
			q := pgns.Queue.New(t)
			f := newFleet(t, q, "", faultEnv())
			ctx := context.Background()
			hosts := f.hosts(2)
			d := hosts[0]
			ids, subjects, err := f.seed(ctx, d.dir, "TERM", 4)
			if err != nil {
				t.Fatal(err)
			}
			l := newLedger(subjects)

			var ticket queuev2.ExecutionFence
			if method == "queue/v2/completion" {
				var r queuev2.LeaseResponse
				params, _ := v2LeaseParams(d.owner, 1)
				if rpcErr, trans, err := f.strict(ctx, d.dir, "queue/v2/lease", params, &r); err != nil || rpcErr != nil || len(r.Leased) != 1 {
					t.Fatalf("lease: %v %v %+v\n%s", err, rpcErr, r, trans())
				}
				if err := l.handOut(r.Leased); err != nil {
					t.Fatal(err)
				}
				ticket = r.Leased[0].Execution
			}

			c := pgtest.Connect(t, q.DSN)
			if _, err := c.Exec(ctx, `SELECT pg_advisory_lock($1::int4, hashtext($2))`, int32(nsLockClass), q.Schema); err != nil {
				t.Fatal(err)
			}
			locked := true
			unlock := func() {
				if locked {
					locked = false
					if _, err := c.Exec(ctx, `SELECT pg_advisory_unlock($1::int4, hashtext($2))`, int32(nsLockClass), q.Schema); err != nil {
						t.Error(err)
					}
				}
			}
			defer unlock()

			type answer struct {
				rpcErr *fakehost.RPCError
				trans  func() string
				err    error
				lease  queuev2.LeaseResponse
				mut    queuev2.MutationResponse
				wfs    []string
			}
			done := make(chan answer, 1)
			go func() {
				var a answer
				if method == "queue/v2/lease" {
					var params map[string]any
					params, a.wfs = v2LeaseParams(d.owner, 1)
					a.rpcErr, a.trans, a.err = f.strict(ctx, d.dir, method, params, &a.lease)
				} else {
					a.rpcErr, a.trans, a.err = f.strict(ctx, d.dir, method,
						map[string]any{"execution": ticket, "status": "completed", "workflow_ref": "standard"}, &a.mut)
				}
				done <- a
			}()

			// The plugin's transaction, waiting for the lock the test holds:
			// terminate it, then release the lock (once), or keep the lock
			// and terminate every attempt until the call answers (every).
			waiting := func() int32 {
				var pid int32
				if err := c.QueryRow(ctx, `SELECT pid FROM pg_stat_activity
					WHERE application_name = 'animus-queue-postgres' AND backend_type = 'client backend'
					AND wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%pg_advisory_xact_lock%'
					AND xact_start IS NOT NULL LIMIT 1`).Scan(&pid); err != nil {
					return 0
				}
				return pid
			}
			var killed []int32
			var a answer
			deadline := time.Now().Add(60 * time.Second)
		watch:
			for {
				select {
				case a = <-done:
					break watch
				default:
				}
				if time.Now().After(deadline) {
					unlock()
					a = <-done
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
				if !tc.every {
					unlock()
					a = <-done
					break watch
				}
			}
			unlock()
			if a.err != nil {
				t.Fatal(a.err)
			}
			if len(killed) == 0 {
				msg := ""
				if a.trans != nil {
					msg = a.trans()
				}
				t.Fatalf("no animus-queue-postgres backend ever waited for the namespace lock inside its %s transaction (answer %v)\n%s",
					method, a.rpcErr, msg)
			}
			outcome := "succeeded on pgkit's retry"
			switch {
			case a.rpcErr != nil && a.rpcErr.Code == codeRetry:
				outcome = fmt.Sprintf("answered -32205 (%s)", a.rpcErr.Message)
			case a.rpcErr != nil:
				t.Fatalf("%s with its backend terminated: error %d %s, want -32205 or success\n%s", method, a.rpcErr.Code, a.rpcErr.Message, a.trans())
			case tc.every:
				t.Fatalf("%s succeeded although every attempt's backend was terminated while the test held the lock: %+v %s\n%s",
					method, a.lease, a.mut, a.trans())
			}
			pid := killed[0]

			if method == "queue/v2/lease" {
				if a.rpcErr == nil {
					if len(a.lease.Leased) != 1 {
						t.Fatalf("lease after the retry: %+v\n%s", a.lease, a.trans())
					}
					if err := queuev2.AcceptLeased(a.lease.Leased[0], d.owner); err != nil {
						t.Fatal(err)
					}
					if err := l.handOut(a.lease.Leased); err != nil {
						t.Fatal(err)
					}
					ticket = a.lease.Leased[0].Execution
				} else {
					// Terminated before COMMIT: nothing is assigned.
					var s hostsStats
					if err := looseRetry(ctx, d, "queue/stats", map[string]any{}, &s); err != nil {
						t.Fatal(err)
					}
					if s.Assigned != 0 || s.Pending != len(ids) {
						t.Errorf("after the terminated lease: %+v, want all %d pending", s, len(ids))
					}
				}
			} else {
				if a.rpcErr == nil {
					if a.mut.Outcome != "applied" || a.mut.Execution == nil || a.mut.Execution.Key() != ticket.Key() {
						t.Fatalf("completion after the retry: %s\n%s", a.mut, a.trans())
					}
					l.complete(ticket.EntryID())
				} else {
					// The terminated attempt wrote nothing: the retry applies.
					var m queuev2.MutationResponse
					if rpcErr, trans, err := f.strict(ctx, d.dir, method,
						map[string]any{"execution": ticket, "status": "completed", "workflow_ref": "standard"}, &m); err != nil || rpcErr != nil ||
						m.Outcome != "applied" {
						t.Fatalf("completion retried after -32205: %v %v %s, want applied (the terminated attempt committed nothing)\n%s", err, rpcErr, m, trans())
					}
					l.complete(ticket.EntryID())
				}
			}
			if ticket.QueueLease != nil && l.completed[ticket.EntryID()] == 0 {
				if err := d.completeOnce(ctx, l, ticket, true); err != nil {
					t.Fatal(err)
				}
			}
			if err := drainHosts(ctx, hosts, l, drainOptions{retriable: false, deadline: 2 * time.Minute}); err != nil {
				t.Fatal(err)
			}
			verifyDrained(t, ctx, hosts[1], l, ids)
			t.Logf("%s: %d backend(s) terminated (first %d) while waiting for the namespace lock inside the transaction; the call %s",
				method, len(killed), pid, outcome)
		})
	}
}

// startProxy puts a pgproxy in front of q's server.
func startProxy(t *testing.T, q pgns.NS) *pgproxy.Proxy {
	t.Helper()
	target, err := pgproxy.Target(q.DSN)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pgproxy.Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestFaultCommitCut (c, first half): the network drops between a v2
// lease's COMMIT and its answer (pgproxy.ArmCommitCut). The lease is
// committed on the server; the plugin answers -32205. No lease hands the
// entry out again, before or after the TTL; the daemon that sent it
// recovers it with the ticket it rebuilds and completes it once.
func TestFaultCommitCut(t *testing.T) {
	q := pgns.Queue.New(t)
	p := startProxy(t, q)
	f := newFleet(t, q, p.DSN(q.DSN), faultEnv())
	ctx := context.Background()
	hosts := f.hosts(3)
	a := hosts[0]
	ids, subjects, err := f.seed(ctx, a.dir, "CUT", 5)
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(subjects)

	p.ArmCommitCut()
	params, wfs := v2LeaseParams(a.owner, 1)
	var r queuev2.LeaseResponse
	rpcErr, trans, err := f.strict(ctx, a.dir, "queue/v2/lease", params, &r)
	switch {
	case err != nil:
		t.Fatal(err)
	case p.CommitCuts() != 1:
		t.Fatalf("the armed COMMIT cut fired %d times during the lease, want 1\n%s", p.CommitCuts(), trans())
	case rpcErr == nil:
		t.Fatalf("lease with its COMMIT reply cut answered %+v, want -32205\n%s", r, trans())
	case rpcErr.Code != codeRetry:
		t.Fatalf("lease with its COMMIT reply cut: error %d %s, want -32205\n%s", rpcErr.Code, rpcErr.Message, trans())
	}
	cutAt := time.Now()
	t.Logf("lease with the COMMIT reply cut answered -32205 %q", rpcErr.Message)
	l.uncertain[wfs[0]] = uncertainLease{owner: a.owner, at: cutAt}

	// Committed on the server, never acknowledged.
	var asg assignedList
	if err := looseRetry(ctx, hosts[1], "queue/list", map[string]any{"status": []string{"assigned"}}, &asg); err != nil {
		t.Fatal(err)
	}
	if len(asg.Entries) != 1 || asg.Entries[0].WorkflowID == nil || *asg.Entries[0].WorkflowID != wfs[0] {
		t.Fatalf("assigned after the cut: %+v, want one entry with the lease's workflow id %s (the COMMIT reached the server)", asg.Entries, wfs[0])
	}
	cut := asg.Entries[0].EntryID

	// The other hosts drain the rest; the cut entry is not among them.
	if err := drainHosts(ctx, hosts[1:], l, drainOptions{retriable: true, deadline: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if len(l.tickets[cut]) != 0 {
		t.Errorf("entry %s with the lost lease answer was leased again: %v", cut, l.tickets[cut])
	}
	// Not after its expiry either.
	pause(ctx, time.Until(cutAt.Add(faultTTL+300*time.Millisecond)))
	params, _ = v2LeaseParams(hosts[2].owner, 5)
	r = queuev2.LeaseResponse{}
	if rpcErr, trans, err := f.strict(ctx, hosts[2].dir, "queue/v2/lease", params, &r); err != nil || rpcErr != nil ||
		len(r.Leased) != 0 || len(r.Blocked) != 0 {
		t.Fatalf("lease after the lost lease expired: %v %v %+v, want nothing leased or blocked\n%s", err, rpcErr, r, trans())
	}

	recovered, err := reconcileLost(ctx, hosts[2], l, faultTTL)
	if err != nil {
		t.Fatal(err)
	}
	if recovered != 1 || l.recovered[cut].QueueLease == nil || l.recovered[cut].QueueLease.Generation != 2 {
		t.Errorf("recovered %d (%+v), want the cut entry at lease generation 2", recovered, l.recovered)
	}
	verifyDrained(t, ctx, hosts[2], l, ids)
}

// TestFaultNetworkDown (c, second half): every connection cut and new
// ones refused (pgproxy CutAll + Refuse(true)) for a while in the middle
// of a four-host drain, then the network back (Refuse(false)). The connect
// timeout is 1 s so calls during the outage answer -32205 rather than
// outlast it.
func TestFaultNetworkDown(t *testing.T) {
	const outage = 3 * time.Second
	q := pgns.Queue.New(t)
	p := startProxy(t, q)
	f := newFleet(t, q, p.DSN(q.DSN), faultEnv("ANIMUS_QUEUE_PG_CONNECT_TIMEOUT_MS", "1000"))
	faultDrain(t, q, f, fmt.Sprintf("network down %v (CutAll, Refuse)", outage), func() {
		p.CutAll()
		p.Refuse(true)
		time.Sleep(outage)
		p.CutAll()
		p.Refuse(false)
	})
}

// TestFaultCommitCutCompletion: the same cut after a queue/v2/completion's
// COMMIT. The plugin answers -32205; the daemon's retry with the same
// ticket answers already_applied with that ticket, and the entry is
// finished once.
func TestFaultCommitCutCompletion(t *testing.T) {
	q := pgns.Queue.New(t)
	p := startProxy(t, q)
	f := newFleet(t, q, p.DSN(q.DSN), faultEnv())
	ctx := context.Background()
	d := f.hosts(1)[0]
	ids, subjects, err := f.seed(ctx, d.dir, "CUTC", 1)
	if err != nil {
		t.Fatal(err)
	}
	l := newLedger(subjects)
	params, _ := v2LeaseParams(d.owner, 1)
	var r queuev2.LeaseResponse
	if rpcErr, trans, err := f.strict(ctx, d.dir, "queue/v2/lease", params, &r); err != nil || rpcErr != nil || len(r.Leased) != 1 {
		t.Fatalf("lease: %v %v %+v\n%s", err, rpcErr, r, trans())
	}
	if err := l.handOut(r.Leased); err != nil {
		t.Fatal(err)
	}
	ticket := r.Leased[0].Execution
	complete := map[string]any{"execution": ticket, "status": "completed", "workflow_ref": "standard"}

	p.ArmCommitCut()
	var m queuev2.MutationResponse
	rpcErr, trans, err := f.strict(ctx, d.dir, "queue/v2/completion", complete, &m)
	switch {
	case err != nil:
		t.Fatal(err)
	case p.CommitCuts() != 1:
		t.Fatalf("the armed COMMIT cut fired %d times during the completion, want 1\n%s", p.CommitCuts(), trans())
	case rpcErr == nil || rpcErr.Code != codeRetry:
		t.Fatalf("completion with its COMMIT reply cut answered %v %s, want -32205\n%s", rpcErr, m, trans())
	}
	m = queuev2.MutationResponse{}
	if rpcErr, trans, err := f.strict(ctx, d.dir, "queue/v2/completion", complete, &m); err != nil || rpcErr != nil ||
		m.Outcome != "already_applied" || m.Execution == nil || m.Execution.Key() != ticket.Key() {
		t.Fatalf("completion retried after the cut: %v %v %s, want already_applied with the ticket (the cut COMMIT reached the server)\n%s",
			err, rpcErr, m, trans())
	}
	l.complete(ticket.EntryID())
	verifyDrained(t, ctx, d, l, ids)
}
