package bench

import (
	"sort"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

const echoParams = `{"message":"hello from the benchmark","extra":{"n":1,"tags":["a","b"]}}`

// BenchmarkRoundTrip compares request/response round trips through a real
// pluginkit child (animus-example, example/echo) with a bare echo child
// that only decodes the envelope and writes the reply. Both run in the
// same benchmark, interleaved request by request, so machine noise hits
// both equally. Reported: each side's round trips per second, p50/p99
// latency, and pluginkit/bare (goal ≥ 0.8).
func BenchmarkRoundTrip(b *testing.B) {
	plugin := spawn(b, binaries.Path(b, "animus-example"))
	plugin.handshake(b)
	bare := spawn(b, binaries.Path(b, "bare-echo"))
	for range 200 { // warm both up
		plugin.roundTrip(b, "example/echo", echoParams)
		bare.roundTrip(b, "example/echo", echoParams)
	}
	pk := make([]time.Duration, 0, b.N)
	bb := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		plugin.roundTrip(b, "example/echo", echoParams)
		t1 := time.Now()
		bare.roundTrip(b, "example/echo", echoParams)
		pk = append(pk, t1.Sub(t0))
		bb = append(bb, time.Since(t1))
	}
	b.StopTimer()
	pkRate, bareRate := rate(pk), rate(bb)
	b.ReportMetric(pkRate, "pluginkit-rt/s")
	b.ReportMetric(bareRate, "bare-rt/s")
	b.ReportMetric(pkRate/bareRate, "ratio")
	b.ReportMetric(float64(percentile(pk, 50).Microseconds()), "pluginkit-p50-µs")
	b.ReportMetric(float64(percentile(pk, 99).Microseconds()), "pluginkit-p99-µs")
	b.ReportMetric(float64(percentile(bb, 50).Microseconds()), "bare-p50-µs")
	b.ReportMetric(float64(percentile(bb, 99).Microseconds()), "bare-p99-µs")
}

// BenchmarkPing is the floor: $/ping is answered on the reader goroutine
// without touching the worker queue.
func BenchmarkPing(b *testing.B) {
	plugin := spawn(b, binaries.Path(b, "animus-example"))
	plugin.handshake(b)
	b.ResetTimer()
	for range b.N {
		plugin.roundTrip(b, "$/ping", `{}`)
	}
}

func rate(d []time.Duration) float64 {
	var total time.Duration
	for _, x := range d {
		total += x
	}
	return float64(len(d)) / total.Seconds()
}

func percentile(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}
