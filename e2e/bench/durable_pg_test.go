package bench

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// Benchmarks of animus-durable-postgres through its binary, side by side
// with raw pgx running pgstore's statements (durable_pg_raw_test.go) and
// with animus-durable-sqlite (they need a cluster: run them through
// scripts/postgres.sh run, as make bench does; without $ANIMUS_PG_TEST_DSN
// they skip, or fail under CI=true):
//
//   - BenchmarkDurablePGBeginCommit: begin_step + commit_step pairs per
//     second with 1 and 8 concurrent long-lived plugin processes, against
//     raw pgx on as many kept connections (goal: plugin/raw ≥ 0.7), and
//     animus-durable-sqlite's pairs/s with as many processes on one file,
//     for reference;
//   - BenchmarkDurablePGRecoverInFlight1M (durable_pg_recover_test.go):
//     recover_in_flight through a long-lived process on a namespace
//     holding 1,000,000 committed steps and 100 outstanding reservations
//     (goal: p50 under 5 ms).

const durablePGBinary = "animus-durable-postgres"

// durablePGNamespace is one durable step log in the test cluster.
type durablePGNamespace struct {
	DSN, Schema string
}

// newDurablePGNamespace is a fresh, empty namespace, dropped at cleanup.
func newDurablePGNamespace(tb testing.TB) durablePGNamespace {
	tb.Helper()
	dsn := pgtest.DSN(tb)
	return durablePGNamespace{DSN: dsn, Schema: pgtest.Schema(tb, dsn)}
}

// env is the plugin's environment for the namespace.
func (ns durablePGNamespace) env() []string {
	return []string{"ANIMUS_DURABLE_PG_DSN=" + ns.DSN, "ANIMUS_DURABLE_PG_SCHEMA=" + ns.Schema}
}

// connect opens one plain connection with search_path on the namespace,
// as pgkit sets it.
func (ns durablePGNamespace) connect(ctx context.Context, app string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(ns.DSN)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["search_path"] = ns.Schema
	cfg.RuntimeParams["application_name"] = app
	return pgx.ConnectConfig(ctx, cfg)
}

// startDurablePG starts animus-durable-postgres on ns as the agent runner
// does (scrubbed environment plus the plugin's variables, cwd = the
// project root) and runs its handshake, stopped at cleanup.
func startDurablePG(tb testing.TB, ns durablePGNamespace, dir string) *child {
	tb.Helper()
	c := start(tb, binaries.Path(tb, durablePGBinary), dir, ns.env()...)
	tb.Cleanup(c.stop)
	durablePGInit(tb, c, dir)
	return c
}

// durablePGInit is the agent runner's initialize, bound to dir, and
// initialized. The store opens (and migrates) on the first domain call.
func durablePGInit(tb testing.TB, c *child, dir string) {
	tb.Helper()
	resp := c.roundTrip(tb, "initialize", fmt.Sprintf(`{"capabilities":{"cancellation":true,"progress":false,"streaming":false},"host_info":{"name":"animus-agent-runner","version":"bench"},"init_extensions":{"project_binding":{"project_root":%q,"repo_scope":"bench"}},"protocol_version":"1.1.0"}`, dir))
	if !bytes.Contains(resp, []byte(`"durable_store"`)) {
		tb.Fatalf("initialize: %s", resp)
	}
	c.send(tb, `{"jsonrpc":"2.0","method":"initialized"}`)
}

// BenchmarkDurablePGBeginCommit: exactly-once step pairs (begin_step of a
// free key, a new reservation, then commit_step of it; two write
// transactions) per second, with procs concurrent workers per side:
//
//   - plugin: procs long-lived animus-durable-postgres processes on one
//     namespace, each worker driving its own over stdio;
//   - raw: procs kept pgx connections on a second namespace (schema made
//     by the plugin) running the store's statements for the same two
//     transactions (durable_pg_raw_test.go);
//   - sqlite: procs long-lived animus-durable-sqlite processes on one
//     project's file (WAL, synchronous=FULL, BEGIN IMMEDIATE), for
//     reference.
//
// Every writer of a namespace (or file) is serialised by its lock, so
// more workers add queueing, not throughput. The sides run in rotating
// rounds (every worker does a few pairs, in parallel; then the next
// side), so the machine's noise falls on all alike. ns/op is one round of
// all three; read the metrics: pairs/s of wall time per side, plugin/raw
// (the goal is ≥ 0.7), and the pair latency one worker sees (it includes
// waiting for the lock).
func BenchmarkDurablePGBeginCommit(b *testing.B) {
	for _, procs := range []int{1, 8} {
		b.Run("procs="+strconv.Itoa(procs), func(b *testing.B) { durablePGPairs(b, procs) })
	}
}

func durablePGPairs(b *testing.B, procs int) {
	pns, rns := newDurablePGNamespace(b), newDurablePGNamespace(b)
	pdir, sdir := projectDir(b), projectDir(b)
	var plugins, sqlites []*child
	for i := range procs {
		c := startDurablePG(b, pns, pdir)
		if i == 0 {
			durableOK(b, c, "durable/begin_workflow_run", `{"run_id":"bench","phase_id":"p"}`)
		}
		plugins = append(plugins, c)
		s := start(b, binaries.Path(b, durableBinary), sdir)
		b.Cleanup(s.stop)
		durableHandshake(b, s) // registers bench/p again: a new epoch, nothing else
		sqlites = append(sqlites, s)
	}
	// The raw side's schema and run come from the plugin itself; that
	// process then exits.
	seed := start(b, binaries.Path(b, durablePGBinary), pdir, rns.env()...)
	durablePGInit(b, seed, pdir)
	durableOK(b, seed, "durable/begin_workflow_run", `{"run_id":"bench","phase_id":"p"}`)
	seed.shutdown(b)
	raws := make([]*rawDurablePG, procs)
	for i := range raws {
		raws[i] = newRawDurablePG(b, rns)
	}

	const perRound = 4
	var seq atomic.Int64
	key := func() string { return "bench:" + strconv.FormatInt(seq.Add(1), 10) }
	var pluginLat, rawLat, sqliteLat latencies
	sides := []struct {
		name string
		lat  *latencies
		t    time.Duration
		fn   func(tb testing.TB, i int)
	}{
		{name: "plugin", lat: &pluginLat, fn: func(tb testing.TB, i int) {
			for range perRound {
				t0 := time.Now()
				durablePair(tb, plugins[i], key())
				pluginLat.add(time.Since(t0))
			}
		}},
		{name: "raw", lat: &rawLat, fn: func(tb testing.TB, i int) {
			for range perRound {
				t0 := time.Now()
				raws[i].pair(tb, key())
				rawLat.add(time.Since(t0))
			}
		}},
		{name: "sqlite", lat: &sqliteLat, fn: func(tb testing.TB, i int) {
			for range perRound {
				t0 := time.Now()
				durablePair(tb, sqlites[i], key())
				sqliteLat.add(time.Since(t0))
			}
		}},
	}
	rounds := 0
	round := func() {
		for k := range sides { // rotate who goes first
			s := &sides[(rounds+k)%len(sides)]
			s.t += parallel(b, procs, s.fn)
		}
		rounds++
	}
	for range 3 { // connections, statement caches, page cache
		round()
	}
	rounds = 0
	for i := range sides {
		sides[i].t = 0
		sides[i].lat.d = nil
	}
	for b.Loop() {
		round()
	}
	pairs := float64(rounds * procs * perRound)
	rates := map[string]float64{}
	for _, s := range sides {
		rates[s.name] = pairs / s.t.Seconds()
		b.ReportMetric(rates[s.name], s.name+"-pairs/s")
	}
	b.ReportMetric(rates["plugin"]/rates["raw"], "plugin/raw")
	for _, s := range sides {
		b.ReportMetric(ms(percentile(s.lat.d, 50)), s.name+"-pair-p50-ms")
		b.ReportMetric(ms(percentile(s.lat.d, 99)), s.name+"-pair-p99-ms")
	}
}
