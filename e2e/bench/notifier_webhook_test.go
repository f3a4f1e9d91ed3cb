package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// notifierReceiver is a local webhook endpoint that answers 204 and counts.
func notifierReceiver(tb testing.TB) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	tb.Cleanup(srv.Close)
	return srv, &n
}

// spawnNotifier starts animus-notifier-webhook in dir with env (as the
// daemon would forward it) and runs the handshake.
func spawnNotifier(tb testing.TB, dir string, env ...string) *child {
	tb.Helper()
	c := start(tb, binaries.Path(tb, "animus-notifier-webhook"), dir, append([]string{"HOME=" + dir}, env...)...)
	tb.Cleanup(c.stop)
	c.handshake(tb)
	return c
}

func notifyParams(dir string, i int) string {
	return fmt.Sprintf(`{"event":{"schema":"animus.daemon.event.v1","id":"bench-%d","seq":%d,"timestamp":"2026-05-31T00:00:00.123456+00:00","event_type":"workflow_completed","project_root":%q,"data":{"workflow_id":"wf-%d","phase":"review"}}}`,
		i, i, dir, i)
}

// BenchmarkNotifierWebhookDeliver measures notify → delivered: each
// notifier/notify commits its outbox row (synchronous=FULL), signs the
// request (Standard Webhooks) and POSTs it to a local receiver (the POST
// goes out while the commit waits for its fsync), and answers
// delivered:1 once both are done (the outcome is recorded after). Beside it, in the same run
// and interleaved request by request, a bare Go loop POSTs a body of the
// same size to the same receiver. Reported: both rates, plugin/bare, the
// plugin's p50/p99, and the p50 of one 4 KiB write+fsync on the same disk:
// the floor a commit that survives power loss costs before notify may
// answer. deliver-ratio is the plugin's p50 over limit-p50, that fsync p50
// plus the bare POST's p50.
func BenchmarkNotifierWebhookDeliver(b *testing.B) {
	srv, received := notifierReceiver(b)
	dir := b.TempDir()
	plugin := spawnNotifier(b, dir, "ANIMUS_WEBHOOK_URL="+srv.URL+"/hook", "ANIMUS_WEBHOOK_SECRET=whsec_YmVuY2htYXJrLXNpZ25pbmcta2V5")
	body := bytes.Repeat([]byte("x"), 420) // about the size of a delivery document
	client := &http.Client{}
	post := func() {
		resp, err := client.Post(srv.URL+"/bare", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	f, err := os.Create(filepath.Join(b.TempDir(), "fsync-probe"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	page := make([]byte, 4096)
	fsync := func() time.Duration {
		t0 := time.Now()
		if _, err := f.WriteAt(page, 0); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	seq := 0
	deliver := func() {
		seq++
		line := plugin.roundTrip(b, "notifier/notify", notifyParams(dir, seq))
		if !bytes.Contains(line, []byte(`"delivered":1`)) {
			b.Fatalf("notify: %s", line)
		}
	}
	for range 50 {
		deliver()
		post()
	}
	pk := make([]time.Duration, 0, b.N)
	bare := make([]time.Duration, 0, b.N)
	syncs := make([]time.Duration, 0, b.N)
	before := received.Load()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		deliver()
		t1 := time.Now()
		post()
		pk = append(pk, t1.Sub(t0))
		bare = append(bare, time.Since(t1))
		b.StopTimer()
		syncs = append(syncs, fsync())
		b.StartTimer()
	}
	b.StopTimer()
	if got := received.Load() - before; got != int64(2*b.N) {
		b.Fatalf("receiver saw %d requests, want %d", got, 2*b.N)
	}
	pr, br := rate(pk), rate(bare)
	b.ReportMetric(pr, "delivered/s")
	b.ReportMetric(br, "bare-post/s")
	b.ReportMetric(pr/br, "ratio")
	b.ReportMetric(float64(percentile(pk, 50).Microseconds()), "notify-p50-µs")
	b.ReportMetric(float64(percentile(pk, 99).Microseconds()), "notify-p99-µs")
	b.ReportMetric(float64(percentile(syncs, 50).Microseconds()), "fsync-p50-µs")
	// The goal's yardstick: one durable commit plus one POST, both
	// measured in this run, against notify → delivered.
	limit := percentile(syncs, 50) + percentile(bare, 50)
	b.ReportMetric(float64(percentile(bare, 50).Microseconds()), "bare-post-p50-µs")
	b.ReportMetric(float64(limit.Microseconds()), "limit-p50-µs")
	b.ReportMetric(float64(percentile(pk, 50))/float64(limit), "deliver-ratio")
}

// BenchmarkNotifierWebhookFlush100k measures notifier/flush {} with 100,000
// pending rows in the outbox (seeded once, through the binary's backfill
// mode): each flush claims max_deliveries_per_tick rows (the reference's
// default 8, and the maximum 128) and delivers them to a local receiver,
// 4 at a time. Reported: flush latency (ns/op, and flush-ms), rows per
// flush, and the plugin's resident memory before and after the flushes.
func BenchmarkNotifierWebhookFlush100k(b *testing.B) {
	const pending = 100_000
	srv, received := notifierReceiver(b)
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".animus"), 0o755); err != nil {
		b.Fatal(err)
	}
	writeConfig := func(perTick int) {
		config := fmt.Sprintf(`{"notification_config":{"connectors":[{"type":"webhook","id":"ops","url_env":"OPS_URL","max_concurrency":4}],
			"subscriptions":[{"id":"all","connector_id":"ops"}],"max_deliveries_per_tick":%d}}`, perTick)
		if err := os.WriteFile(filepath.Join(dir, ".animus", "pm-config.json"), []byte(config), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	writeConfig(128)
	var events bytes.Buffer
	for i := range pending {
		events.WriteString(notifyParams(dir, i)[len(`{"event":`):])
		events.Truncate(events.Len() - 1)
		events.WriteByte('\n')
	}
	seed := exec.Command(binaries.Path(b, "animus-notifier-webhook"), "backfill", "--project", dir)
	seed.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "OPS_URL=" + srv.URL}
	seed.Stdin = &events
	start := time.Now()
	if out, err := seed.CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf("%d deliveries enqueued", pending)) {
		b.Fatalf("backfill: %v\n%s", err, out)
	}
	b.Logf("seeded %d pending deliveries through `backfill` in %v", pending, time.Since(start).Round(time.Millisecond))

	// The parent of sub-benchmarks runs once, so the seed is shared. The
	// table keeps its 100,000 rows (sent ones stay), but the flushes of a
	// whole run can send nearly all of the pending ones: before a flush
	// would find fewer than it claims, the sent rows go back to pending,
	// with the timer stopped.
	plugin := spawnNotifier(b, dir, "OPS_URL="+srv.URL)
	pid := plugin.cmd.Process.Pid
	base, refilled := received.Load(), int64(0)
	left := func() int64 { return pending + refilled - (received.Load() - base) }
	for _, perTick := range []int{8, 128} {
		b.Run(fmt.Sprintf("tick-%d", perTick), func(b *testing.B) {
			writeConfig(perTick)
			// The config file changed: one flush to pick it up first.
			plugin.roundTrip(b, "notifier/flush", `{}`)
			rssBefore := vmStatus(b, pid, "VmRSS")
			before := received.Load()
			b.ResetTimer()
			for range b.N {
				if left() < int64(perTick) {
					b.StopTimer()
					refilled += repend(b, filepath.Join(dir, ".animus", "notifier.sqlite"))
					b.StartTimer()
				}
				line := plugin.roundTrip(b, "notifier/flush", `{}`)
				if !bytes.Contains(line, []byte(`notification-delivery-sent`)) {
					b.Fatalf("flush: %.300s", line)
				}
			}
			b.StopTimer()
			sent := received.Load() - before
			if sent != int64(perTick*b.N) {
				b.Fatalf("receiver saw %d requests for %d flushes of %d", sent, b.N, perTick)
			}
			b.ReportMetric(float64(sent)/float64(b.N), "rows/flush")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "flush-ms")
			b.ReportMetric(float64(rssBefore)/(1<<20), "rss-before-MiB")
			b.ReportMetric(float64(vmStatus(b, pid, "VmRSS"))/(1<<20), "rss-after-MiB")
			b.ReportMetric(float64(vmStatus(b, pid, "VmHWM"))/(1<<20), "rss-peak-MiB")
		})
	}
}

// repend puts every sent row of the outbox at path back to pending, due
// at once, and checkpoints the WAL so the plugin's next flush does not pay
// for this bulk write. It returns how many rows it put back.
func repend(tb testing.TB, path string) int64 {
	tb.Helper()
	ctx := context.Background()
	db, err := sqlitex.Open(ctx, sqlitex.Options{Path: path, BusyTimeout: 10 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	res, err := db.ExecContext(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = 0,
		sent_at = NULL, last_status_code = NULL, claim_token = NULL, claimed_pid = NULL WHERE status = 'sent'`)
	if err != nil {
		tb.Fatal(err)
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		tb.Fatalf("put %d sent rows back to pending (%v): the outbox ran dry", n, err)
	}
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("put %d sent rows back to pending", n)
	return n
}
