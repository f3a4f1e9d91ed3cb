package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
)

// slackRig is animus-trigger-slack watching a fake Slack over Socket Mode,
// with a reader that timestamps every trigger/event frame on stdout.
type slackRig struct {
	fake *fakeslack.Server
	c    *child

	mu      sync.Mutex
	cond    *sync.Cond
	arrived map[int]time.Time // envelope sequence → frame arrival
}

func newSlackRig(b *testing.B) *slackRig {
	b.Helper()
	fake := fakeslack.New(b, fakeslack.Options{})
	env := []string{"SLACK_TRIGGER_ID=bench"}
	for k, v := range fake.Env() {
		env = append(env, k+"="+v)
	}
	c := start(b, binaries.Path(b, "animus-trigger-slack"), b.TempDir(), env...)
	b.Cleanup(c.stop)
	r := &slackRig{fake: fake, c: c, arrived: map[int]time.Time{}}
	r.cond = sync.NewCond(&r.mu)
	r.c.handshake(b)
	if resp := r.c.roundTrip(b, "trigger/watch", `{}`); !bytes.Contains(resp, []byte(`"watching":true`)) {
		b.Fatalf("trigger/watch: %s", resp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fake.WaitConnections(ctx, 1); err != nil {
		b.Fatal(err)
	}
	go r.read()
	return r
}

// read records trigger/event arrivals; the sequence number is the ts
// suffix the envelope carried (event_id slack:T0FAKE/C1/<ts>).
func (r *slackRig) read() {
	for {
		line, err := r.c.out.ReadBytes('\n')
		if err != nil {
			return
		}
		now := time.Now()
		if !bytes.Contains(line, []byte(`"method":"trigger/event"`)) {
			continue
		}
		var f struct {
			Params struct {
				EventID string `json:"event_id"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &f) != nil {
			continue
		}
		_, frac, _ := strings.Cut(f.Params.EventID, ".")
		seq, err := strconv.Atoi(frac)
		if err != nil {
			continue
		}
		r.mu.Lock()
		r.arrived[seq] = now
		r.cond.Broadcast()
		r.mu.Unlock()
	}
}

func (r *slackRig) waitArrived(seq int) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if at, ok := r.arrived[seq]; ok {
			return at
		}
		r.cond.Wait()
	}
}

func slackEnvelope(seq int) (id string, env []byte) {
	id = "bench-" + strconv.Itoa(seq)
	ts := fmt.Sprintf("1715701234.%06d", seq)
	return id, fakeslack.EventsAPI(id, 0, fakeslack.Callback("T0FAKE", "Ev"+strconv.Itoa(seq),
		fakeslack.Mention("C1", "U1", "<@U0BOT> please review PR #"+strconv.Itoa(seq), ts)))
}

// BenchmarkTriggerSlackThroughput sends b.N Socket Mode envelopes and
// measures until the last trigger/event frame is read from stdout: events
// per second end to end (ack, map, dedup claim in SQLite, frame), with the
// ack and emit latency percentiles. "flood" writes as fast as the fake can,
// so the rate is the plugin's ceiling and latencies are queueing behind the
// backlog; "paced-1000" sends 1000 events/s, about a hundred times Slack's
// sustained per-app event rate, and shows latencies below saturation.
func BenchmarkTriggerSlackThroughput(b *testing.B) {
	for _, bc := range []struct {
		name     string
		interval time.Duration
	}{{"flood", 0}, {"paced-1000", time.Millisecond}} {
		b.Run(bc.name, func(b *testing.B) { slackThroughput(b, bc.interval) })
	}
}

func slackThroughput(b *testing.B, interval time.Duration) {
	r := newSlackRig(b)
	const warm = 200
	for i := 1; i <= warm; i++ {
		_, env := slackEnvelope(i)
		if err := r.fake.Send(env); err != nil {
			b.Fatal(err)
		}
	}
	r.waitArrived(warm)
	envs := make([][]byte, b.N)
	ids := make([]string, b.N)
	for i := range envs {
		ids[i], envs[i] = slackEnvelope(warm + 1 + i)
	}
	sent := make([]time.Time, b.N)
	b.ResetTimer()
	start := time.Now()
	for i, env := range envs {
		if interval > 0 {
			if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
				time.Sleep(d)
			}
		}
		sent[i] = time.Now()
		if err := r.fake.Send(env); err != nil {
			b.Fatal(err)
		}
	}
	emit := make([]time.Duration, b.N)
	for i := range envs {
		emit[i] = r.waitArrived(warm + 1 + i).Sub(sent[i])
	}
	elapsed := time.Since(start)
	b.StopTimer()
	acks := make([]time.Duration, 0, b.N)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, id := range ids {
		lat, err := r.fake.WaitAck(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		acks = append(acks, lat)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(percentile(acks, 50).Microseconds()), "ack-p50-µs")
	b.ReportMetric(float64(percentile(acks, 99).Microseconds()), "ack-p99-µs")
	b.ReportMetric(float64(percentile(emit, 50).Microseconds()), "emit-p50-µs")
	b.ReportMetric(float64(percentile(emit, 99).Microseconds()), "emit-p99-µs")
}

// BenchmarkTriggerSlackLatency sends one envelope at a time and waits for
// both its ack (at the fake) and its trigger/event frame (on stdout): the
// unloaded latencies Slack's 3 s ack deadline is measured against.
func BenchmarkTriggerSlackLatency(b *testing.B) {
	r := newSlackRig(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	acks := make([]time.Duration, 0, b.N)
	emit := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		id, env := slackEnvelope(i)
		t0 := time.Now()
		if err := r.fake.Send(env); err != nil {
			b.Fatal(err)
		}
		at := r.waitArrived(i)
		lat, err := r.fake.WaitAck(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		acks = append(acks, lat)
		emit = append(emit, at.Sub(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(acks, 50).Microseconds()), "ack-p50-µs")
	b.ReportMetric(float64(percentile(acks, 99).Microseconds()), "ack-p99-µs")
	b.ReportMetric(float64(percentile(emit, 50).Microseconds()), "emit-p50-µs")
	b.ReportMetric(float64(percentile(emit, 99).Microseconds()), "emit-p99-µs")
}
