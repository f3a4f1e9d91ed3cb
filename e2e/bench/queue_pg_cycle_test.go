package bench

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// BenchmarkQueuePGV2Cycle: queue/v2/enqueue → lease → completion cycles
// per second through animus-queue-postgres with 1, 4 and 16 concurrent
// workers, each driving its own plugin, against the same cycle in raw pgx
// (queue_pg_raw_test.go) with as many workers, each on its own
// connection. Two process models, each a sub-benchmark per concurrency:
//
//   - model=kept: every plugin worker is one long-lived process speaking
//     JSON-RPC over stdio (one pool, kept), against kept raw connections:
//     the plugin's overhead over its SQL (goal: plugin/raw ≥ 0.7);
//   - model=percall: the 0.7 daemon's model, a fresh process per call
//     (spawn, initialize, the call, shutdown/exit; the process dials and
//     checks the schema version), against raw pgx dialling per call.
//
// A worker's lease hands out the head of the queue, whoever enqueued it,
// and the worker completes what it leased with its fence, as daemons
// sharing one queue do. Every answer is checked: a cycle that did not
// apply is not timed as one. Plugin and raw each have a namespace of their
// own and run in alternating rounds (every worker does a few cycles, in
// parallel), so the machine's noise falls on both alike. ns/op is one
// round of both sides; read the metrics: cycles/s of wall time per side,
// the cycle latency seen by one worker (it includes waiting for the
// namespace lock, which serialises every writer), and plugin/raw, the
// ratio of the rates.
func BenchmarkQueuePGV2Cycle(b *testing.B) {
	for _, model := range []string{"kept", "percall"} {
		for _, procs := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("model=%s/procs=%d", model, procs), func(b *testing.B) {
				pgCycles(b, model == "percall", procs)
			})
		}
	}
}

// pgPluginCycle runs TASK-<n> through the three v2 calls with call.
func pgPluginCycle(tb testing.TB, call func(method, params string) []byte, n int) {
	res := call("queue/v2/enqueue", enqueueV2Params(n, true))
	var enq struct {
		Enqueued bool `json:"enqueued"`
	}
	if json.Unmarshal(res, &enq) != nil || !enq.Enqueued {
		tb.Fatalf("queue/v2/enqueue TASK-%d: %.500s", n, res)
	}
	leased := mustLeased(tb, call("queue/v2/lease", leaseV2Params(1, strconv.Itoa(n))), 1).Leased[0]
	res = call("queue/v2/completion", fenceParams(leased.Execution, `,"status":"completed","workflow_ref":"standard"`))
	mustOutcome(tb, "queue/v2/completion", res, "applied")
}

// latencies collects cycle times from several workers.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func pgCycles(b *testing.B, perCall bool, procs int) {
	pq, rq := pgns.Queue.New(b), pgns.Queue.New(b)
	dir := projectDir(b)
	spawnPlugin := pgSpawner(b, pq)
	callOnce(b, pgSpawner(b, rq), dir, "queue/stats", `{}`) // the plugin creates the raw side's schema
	perRound := 4
	var kept []*child
	if perCall {
		perRound = 1
	} else {
		for range procs {
			c := spawnPlugin(b, dir)
			kept = append(kept, c)
			defer c.shutdown(b)
		}
	}
	raws := make([]*rawPG, procs)
	for i := range raws {
		raws[i] = newRawPG(b, rq, perCall)
	}
	var seq atomic.Int64
	var pluginLat, rawLat latencies
	plugin := func(tb testing.TB, i int) {
		call := func(method, params string) []byte {
			if perCall {
				res, _ := callOnce(tb, spawnPlugin, dir, method, params)
				return res
			}
			return mustResult(tb, kept[i].roundTrip(tb, method, params))
		}
		for range perRound {
			t0 := time.Now()
			pgPluginCycle(tb, call, int(seq.Add(1)))
			pluginLat.add(time.Since(t0))
		}
	}
	raw := func(tb testing.TB, i int) {
		for range perRound {
			t0 := time.Now()
			raws[i].cycle(tb, int(seq.Add(1)))
			rawLat.add(time.Since(t0))
		}
	}
	var pluginT, rawT time.Duration
	rounds := 0
	round := func() {
		rounds++
		if rounds%2 == 0 {
			rawT += parallel(b, procs, raw)
			pluginT += parallel(b, procs, plugin)
		} else {
			pluginT += parallel(b, procs, plugin)
			rawT += parallel(b, procs, raw)
		}
	}
	for range 2 { // connections, statement caches, page cache
		round()
	}
	pluginT, rawT, rounds = 0, 0, 0
	pluginLat.d, rawLat.d = nil, nil
	for b.Loop() {
		round()
	}
	cycles := float64(rounds * procs * perRound)
	pluginRate, rawRate := cycles/pluginT.Seconds(), cycles/rawT.Seconds()
	b.ReportMetric(pluginRate, "plugin-cycles/s")
	b.ReportMetric(rawRate, "raw-cycles/s")
	b.ReportMetric(pluginRate/rawRate, "plugin/raw")
	b.ReportMetric(ms(percentile(pluginLat.d, 50)), "plugin-cycle-p50-ms")
	b.ReportMetric(ms(percentile(pluginLat.d, 99)), "plugin-cycle-p99-ms")
	b.ReportMetric(ms(percentile(rawLat.d, 50)), "raw-cycle-p50-ms")
	b.ReportMetric(ms(percentile(rawLat.d, 99)), "raw-cycle-p99-ms")
}
