package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// Benchmarks of animus-queue-sqlite's generation-fenced surface (issue 15),
// through its binary:
//
//   - BenchmarkQueueV2Cycle: queue/v2/enqueue → lease → lease/renew →
//     completion in the daemon's per-call process model (each call a fresh
//     process with the 0.7 per-kind handshake), interleaved in one run with
//     the 0.3.2 cycle (enqueue → lease → completion, same model, the 0.6
//     handshake) and with raw SQLite running the statements the store runs
//     for each v2 call (queue_v2_raw_test.go), once opening the file per
//     call as a process does and once on a kept connection;
//   - BenchmarkQueueV2LeaseDepth (queue_v2_depth_test.go): queue/v2/lease
//     at depth 100 and 100,000.
//
// Interleaving puts the machine's noise on every side alike: on a shared
// 2-core box the ratios mean more than the absolute numbers. ns/op is one
// round of every side together; read the reported metrics instead.

// cycleTimes collects one side's per-call wall times.
type cycleTimes struct {
	cycles []time.Duration
	calls  [][]time.Duration // per method, in cycle order
}

func newCycleTimes(methods int) *cycleTimes {
	return &cycleTimes{calls: make([][]time.Duration, methods)}
}

func (t *cycleTimes) add(calls ...time.Duration) {
	var sum time.Duration
	for i, d := range calls {
		t.calls[i] = append(t.calls[i], d)
		sum += d
	}
	t.cycles = append(t.cycles, sum)
}

func (t *cycleTimes) reset() {
	t.cycles = nil
	for i := range t.calls {
		t.calls[i] = nil
	}
}

// rate is cycles per second of time spent in this side's cycles.
func (t *cycleTimes) rate() float64 {
	var sum time.Duration
	for _, d := range t.cycles {
		sum += d
	}
	return float64(len(t.cycles)) / sum.Seconds()
}

// allCalls is every call's wall time, whatever the method.
func (t *cycleTimes) allCalls() []time.Duration {
	var all []time.Duration
	for _, c := range t.calls {
		all = append(all, c...)
	}
	return all
}

// v2Cycle runs TASK-<n> through the four v2 calls, each a fresh process,
// checking every answer: a cycle that did not apply must not be timed as
// one.
func v2Cycle(b *testing.B, dir string, n int) []time.Duration {
	d := make([]time.Duration, 4)
	var res []byte
	res, d[0] = callOnce(b, spawnQueue07, dir, "queue/v2/enqueue", enqueueV2Params(n, true))
	var enq struct {
		Enqueued bool   `json:"enqueued"`
		EntryID  string `json:"entry_id"`
	}
	if json.Unmarshal(res, &enq) != nil || !enq.Enqueued {
		b.Fatalf("queue/v2/enqueue TASK-%d: %.500s", n, res)
	}
	res, d[1] = callOnce(b, spawnQueue07, dir, "queue/v2/lease", leaseV2Params(1, strconv.Itoa(n)))
	leased := mustLeased(b, res, 1).Leased[0]
	if leased.Entry.EntryID != enq.EntryID {
		b.Fatalf("queue/v2/lease handed out %s, want %s", leased.Entry.EntryID, enq.EntryID)
	}
	res, d[2] = callOnce(b, spawnQueue07, dir, "queue/v2/lease/renew", fenceParams(leased.Execution, ""))
	fence := mustOutcome(b, "queue/v2/lease/renew", res, "applied")
	res, d[3] = callOnce(b, spawnQueue07, dir, "queue/v2/completion",
		fenceParams(fence, `,"status":"completed","workflow_ref":"standard"`))
	mustOutcome(b, "queue/v2/completion", res, "applied")
	return d
}

// v032Cycle is the 0.3.2 cycle of BenchmarkQueueSQLiteCycle, one fresh
// process per call as a 0.6 daemon runs it.
func v032Cycle(b *testing.B, dir string, n int) []time.Duration {
	d := make([]time.Duration, 3)
	var res []byte
	res, d[0] = callOnce(b, spawnQueue, dir, "queue/enqueue", fmt.Sprintf(benchDispatch, n))
	var e struct {
		EntryID string `json:"entry_id"`
	}
	_ = json.Unmarshal(res, &e)
	res, d[1] = callOnce(b, spawnQueue, dir, "queue/lease", `{"max":1,"workflow_ids":["wf-`+strconv.Itoa(n)+`"]}`)
	if e.EntryID == "" || !bytes.Contains(res, []byte(e.EntryID)) {
		b.Fatalf("queue/lease did not return %q: %.500s", e.EntryID, res)
	}
	res, d[2] = callOnce(b, spawnQueue, dir, "queue/completion", `{"entry_id":"`+e.EntryID+`","status":"completed","workflow_ref":"standard"}`)
	if !bytes.Contains(res, []byte(`"changed":true`)) {
		b.Fatalf("queue/completion: %.500s", res)
	}
	return d
}

func BenchmarkQueueV2Cycle(b *testing.B) {
	v2Dir, v032Dir := projectDir(b), projectDir(b)
	// The gate first: without the v2 surface nothing here means anything.
	spawnQueue07(b, v2Dir).shutdown(b)
	rawOpen, rawKept := newRawV2(b, true), newRawV2(b, false)
	v2, v032 := newCycleTimes(4), newCycleTimes(3)
	ro, rk := newCycleTimes(4), newCycleTimes(4)
	n := 0
	cycle := func() {
		n++
		v2.add(v2Cycle(b, v2Dir, n)...)
		v032.add(v032Cycle(b, v032Dir, n)...)
		ro.add(rawOpen.cycle(b, n)...)
		rk.add(rawKept.cycle(b, n)...)
	}
	for range 3 { // first process starts, file creation, page cache
		cycle()
	}
	for _, t := range []*cycleTimes{v2, v032, ro, rk} {
		t.reset()
	}
	for b.Loop() {
		cycle()
	}
	b.ReportMetric(v2.rate(), "v2-cycles/s")
	b.ReportMetric(v032.rate(), "v0.3.2-cycles/s")
	b.ReportMetric(ro.rate(), "raw-open-cycles/s")
	b.ReportMetric(rk.rate(), "raw-kept-cycles/s")
	for i, m := range []string{"enqueue", "lease", "renew", "completion"} {
		b.ReportMetric(ms(percentile(v2.calls[i], 50)), "v2-"+m+"-p50-ms")
	}
	b.ReportMetric(ms(percentile(v2.allCalls(), 99)), "v2-call-p99-ms")
	b.ReportMetric(ms(percentile(v032.allCalls(), 50)), "v0.3.2-call-p50-ms")
	b.ReportMetric(float64(percentile(ro.allCalls(), 50).Microseconds()), "raw-open-call-p50-µs")
	b.ReportMetric(float64(percentile(rk.allCalls(), 50).Microseconds()), "raw-kept-call-p50-µs")
	// Time per cycle relative to each baseline: how much the v2 cycle
	// costs over the 0.3.2 one (one more call), and the plugin's overhead
	// over the same SQL with and without the per-call open.
	b.ReportMetric(v032.rate()/v2.rate(), "v2/v0.3.2-time-x")
	b.ReportMetric(ro.rate()/v2.rate(), "v2/raw-open-time-x")
	b.ReportMetric(rk.rate()/v2.rate(), "v2/raw-kept-time-x")
}
