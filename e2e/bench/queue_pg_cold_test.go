package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// Benchmarks of animus-queue-postgres through its binary, side by side
// with animus-queue-sqlite and with raw pgx (they need a cluster: run them
// through scripts/postgres.sh run, as make bench does; without
// $ANIMUS_PG_TEST_DSN they skip, or fail under CI=true):
//
//   - BenchmarkQueuePGColdStart: the 0.7 daemon's per-call process model
//     (spawn → 0.7 initialize with the v2 gate → one queue/stats →
//     shutdown/exit), p50/p99, sub-benchmarks backend=sqlite and
//     backend=postgres;
//   - BenchmarkQueuePGV2Cycle (queue_pg_cycle_test.go): queue/v2/enqueue →
//     lease → completion cycles per second with 1, 4 and 16 concurrent
//     workers, against raw pgx running the store's statements
//     (queue_pg_raw_test.go) at the same concurrency, both with kept
//     processes/connections and in the per-call process model;
//   - BenchmarkQueuePGV2LeaseDepth (queue_pg_depth_test.go):
//     queue/v2/lease + release_pending through a kept process at depth
//     100 and 1,000,000 (bulk-filled with SQL).
//
// Every benchmark works in namespaces of its own (e2e/internal/pgns: a
// fresh schema, dropped at cleanup), except the filled ones of the depth
// benchmark, kept for the test binary's run and dropped by TestMain.

// pgSpawner is spawnQueue07 for animus-queue-postgres on the namespace q:
// the daemon's start (scrubbed environment plus the plugin's variables),
// the 0.7 initialize and its v2 gate. It fits callOnce.
func pgSpawner(tb testing.TB, q pgns.NS, extraEnv ...string) func(testing.TB, string) *child {
	bin := binaries.Path(tb, pgns.Queue.Binary)
	env := q.Env(extraEnv...)
	return func(tb testing.TB, dir string) *child {
		tb.Helper()
		c := start(tb, bin, dir, env...)
		if problem := v2GateProblem(c.roundTrip(tb, "initialize", initParams07(dir))); problem != "" {
			c.stop()
			tb.Fatalf("%s does not serve queue/v2 (%s)", pgns.Queue.Binary, problem)
		}
		c.send(tb, `{"jsonrpc":"2.0","method":"initialized"}`)
		return c
	}
}

// coldStarts times per-call exchanges (spawn → initialize → queue/stats
// → shutdown/exit) with b.Loop and reports their p50 and p99. probe, when
// set, runs after each exchange with the timer stopped and its p50 is
// reported as probeName.
func coldStarts(b *testing.B, spawn func(testing.TB, string) *child, dir string, probeName string, probe func() time.Duration) {
	for range 3 { // binary in the page cache, schema created and migrated
		callOnce(b, spawn, dir, "queue/stats", `{}`)
	}
	var d, p []time.Duration
	for b.Loop() {
		runtime.GC() // outside the span, as in BenchmarkQueueSQLiteColdStart
		_, t := callOnce(b, spawn, dir, "queue/stats", `{}`)
		d = append(d, t)
		if probe != nil {
			b.StopTimer()
			p = append(p, probe())
			b.StartTimer()
		}
	}
	b.ReportMetric(ms(percentile(d, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(d, 99)), "p99-ms")
	if probe != nil {
		b.ReportMetric(ms(percentile(p, 50)), probeName)
	}
}

// BenchmarkQueuePGColdStart: one daemon call in a fresh process, per
// backend. For PostgreSQL, dial-p50-ms is what the database part of that
// costs at the least (interleaved, untimed): over raw pgx, dial, ping,
// the schema version read, an empty transaction opened as pgstore opens
// one (lock_timeout, advisory lock) and close.
func BenchmarkQueuePGColdStart(b *testing.B) {
	b.Run("backend=sqlite", func(b *testing.B) {
		coldStarts(b, spawnQueue07, projectDir(b), "", nil)
	})
	b.Run("backend=postgres", func(b *testing.B) {
		q := pgns.Queue.New(b)
		raw := newRawPG(b, q, true)
		coldStarts(b, pgSpawner(b, q), projectDir(b), "dial-p50-ms", func() time.Duration {
			return raw.call(b, "dial", func(context.Context, pgx.Tx) error { return nil })
		})
	})
}

// workerTB lets the shared helpers (roundTrip, mustResult, callOnce…),
// which fail through tb.Fatal, run in a worker goroutine: a failure is
// recorded and ends only that goroutine; run reports it on the benchmark's
// own goroutine.
type workerTB struct {
	testing.TB
	errs *workerErrs
}

type workerErrs struct {
	mu  sync.Mutex
	err error
}

func (w workerTB) Fatal(args ...any)                 { w.fail(fmt.Sprint(args...)) }
func (w workerTB) Fatalf(format string, args ...any) { w.fail(fmt.Sprintf(format, args...)) }
func (w workerTB) FailNow()                          { w.fail("FailNow") }

func (w workerTB) fail(msg string) {
	w.errs.mu.Lock()
	if w.errs.err == nil {
		w.errs.err = fmt.Errorf("%s", msg)
	}
	w.errs.mu.Unlock()
	runtime.Goexit()
}

// parallel runs fn(i) for i in [0, n) in n goroutines and returns the
// wall time until the last one finished, failing b if any did.
func parallel(b *testing.B, n int, fn func(tb testing.TB, i int)) time.Duration {
	b.Helper()
	errs := &workerErrs{}
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		wg.Go(func() { fn(workerTB{TB: b, errs: errs}, i) })
	}
	wg.Wait()
	d := time.Since(t0)
	if errs.err != nil {
		b.Fatal(errs.err)
	}
	return d
}
