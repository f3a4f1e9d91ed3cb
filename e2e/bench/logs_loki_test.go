package bench

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/internal/logwire"
)

// lokiEntry is the wire LogEntry; its field order is the plugin's Loki line.
type lokiEntry = logwire.Entry

var (
	lokiLevels  = []string{"trace", "debug", "info", "warn", "error"}
	lokiSources = []string{"daemon", "plugin", "cli", "workflow"}
)

// lokiEntryAt is the i-th synthetic entry: sources and levels rotate (20
// streams), one in four has a source_name, all carry small fields, like
// the daemon's projected events.
func lokiEntryAt(prefix string, i int, ts time.Time) lokiEntry {
	e := lokiEntry{
		ID: fmt.Sprintf("%s-%08d", prefix, i), TS: ts.UTC().Format(time.RFC3339Nano),
		Level: lokiLevels[i%len(lokiLevels)], Source: lokiSources[(i/len(lokiLevels))%len(lokiSources)],
		Target:  fmt.Sprintf("daemon.events.workflow-phase-%d", i%7),
		Message: "workflow phase completed",
		Fields:  json.RawMessage(fmt.Sprintf(`{"seq":%d,"data":{"workflow_id":"wf-%d","phase":"review"},"schema":"animus.daemon.event.v1"}`, i, i%97)),
	}
	if i%4 == 0 {
		e.SourceName = fmt.Sprintf("animus-subject-%d", i%3)
		e.Target = "plugin." + e.SourceName + ".client"
	}
	return e
}

// lokiPush is what the plugin pushes for entries: streams by (source,
// level) with service_name, structured metadata animus_id, target,
// source_name, the compact JSON entry as the line. encoding is
// "protobuf" (snappy) or "json" (gzip); the headers come with the body.
func lokiPush(tb testing.TB, encoding string, entries []lokiEntry) ([]byte, map[string]string) {
	return lokiPushWith(tb, nil, encoding, entries)
}

// lokiPushWith is lokiPush reusing zw for gzip (a fresh gzip.Writer
// allocates ~1 MB, which the plugin avoids with a pool; so does the bare
// path here, to be a fair floor). zw may be nil.
func lokiPushWith(tb testing.TB, zw *gzip.Writer, encoding string, entries []lokiEntry) ([]byte, map[string]string) {
	tb.Helper()
	type key struct{ source, level string }
	streams := map[key][]fakeloki.Entry{}
	var order []key
	for _, e := range entries {
		ts, err := time.Parse(time.RFC3339Nano, e.TS)
		if err != nil {
			tb.Fatal(err)
		}
		line, err := json.Marshal(e)
		if err != nil {
			tb.Fatal(err)
		}
		sm := map[string]string{"animus_id": e.ID, "target": e.Target}
		if e.SourceName != "" {
			sm["source_name"] = e.SourceName
		}
		k := key{e.Source, e.Level}
		if _, ok := streams[k]; !ok {
			order = append(order, k)
		}
		streams[k] = append(streams[k], fakeloki.Entry{TS: ts, Line: string(line), SM: sm})
	}
	if encoding == "protobuf" {
		byLabels := map[string][]fakeloki.Entry{}
		for k, es := range streams {
			byLabels[fmt.Sprintf(`{level=%q, service_name="animus", source=%q}`, k.level, k.source)] = es
		}
		return fakeloki.EncodeProtoPush(byLabels), map[string]string{"Content-Type": "application/x-protobuf"}
	}
	type jsonStream struct {
		Stream map[string]string `json:"stream"`
		Values [][]any           `json:"values"`
	}
	body := struct {
		Streams []jsonStream `json:"streams"`
	}{}
	for _, k := range order {
		s := jsonStream{Stream: map[string]string{"service_name": "animus", "source": k.source, "level": k.level}}
		for _, e := range streams[k] {
			s.Values = append(s.Values, []any{strconv.FormatInt(e.TS.UnixNano(), 10), e.Line, e.SM})
		}
		body.Streams = append(body.Streams, s)
	}
	raw, err := json.Marshal(body)
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if zw == nil {
		zw, _ = gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	} else {
		zw.Reset(&buf)
	}
	_, _ = zw.Write(raw)
	_ = zw.Close()
	return buf.Bytes(), map[string]string{"Content-Type": "application/json", "Content-Encoding": "gzip"}
}

// barePush POSTs a push body to fakeloki as tenant and requires 204.
func barePush(tb testing.TB, client *http.Client, url, tenant string, body []byte, hdr map[string]string) {
	req, err := http.NewRequest(http.MethodPost, url+"/loki/api/v1/push", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("X-Scope-OrgID", tenant)
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		tb.Fatalf("bare push: %s %s", resp.Status, msg)
	}
}

// spawnLoki starts animus-logs-loki against a fakeloki, as tenant
// "animus", and runs the handshake.
func spawnLoki(tb testing.TB, lokiURL string, env ...string) *child {
	tb.Helper()
	dir := tb.TempDir()
	c := start(tb, binaries.Path(tb, "animus-logs-loki"), dir,
		append([]string{"HOME=" + dir, "LOKI_URL=" + lokiURL, "LOKI_TENANT_ID=animus"}, env...)...)
	tb.Cleanup(c.stop)
	c.handshake(tb)
	return c
}

// BenchmarkLogsLokiStore measures log_storage/store through the binary
// against an in-process fakeloki, in batches of 1 entry (what the daemon
// sends) and 500, in both push encodings. Each iteration stores a fresh
// batch through the plugin (stdio frame, parse, validate, group by stream,
// encode, synchronous push, 204) and then encodes the same entries the
// same way and POSTs them straight to the same fakeloki as another tenant
// (so nothing is dropped as a duplicate): the floor any Loki client pays. Reported:
// entries/s for both, plugin/bare, and the plugin's p50/p99 per call.
func BenchmarkLogsLokiStore(b *testing.B) {
	for _, encoding := range []string{"protobuf", "json"} {
		for _, batch := range []int{1, 500} {
			b.Run(fmt.Sprintf("%s/batch-%d", encoding, batch), func(b *testing.B) {
				fake := fakeloki.New(b, fakeloki.Options{})
				plugin := spawnLoki(b, fake.URL(), "LOKI_PUSH_ENCODING="+encoding)
				client := &http.Client{}
				zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
				// Timestamps advance 1 µs per entry from a minute ago:
				// inside Loki's acceptance window for any b.N here.
				t0 := time.Now().Add(-time.Minute)
				n := 0
				next := func(prefix string) []lokiEntry {
					es := make([]lokiEntry, batch)
					for i := range es {
						es[i] = lokiEntryAt(prefix, n, t0.Add(time.Duration(n)*time.Microsecond))
						n++
					}
					return es
				}
				round := func(pk, bare *[]time.Duration) {
					es := next("e")
					params, err := json.Marshal(map[string]any{"entries": es})
					if err != nil {
						b.Fatal(err)
					}
					want := []byte(`"stored":` + strconv.Itoa(batch) + `}`)
					s := time.Now()
					resp := plugin.roundTrip(b, "log_storage/store", string(params))
					m := time.Now()
					// The bare path encodes inside its timing too, as the
					// plugin does.
					body, hdr := lokiPushWith(b, zw, encoding, es)
					barePush(b, client, fake.URL(), "bare", body, hdr)
					e := time.Now()
					if !bytes.Contains(resp, want) {
						b.Fatalf("store: %.300s", resp)
					}
					if pk != nil {
						*pk = append(*pk, m.Sub(s))
						*bare = append(*bare, e.Sub(m))
					}
				}
				for range 20 { // warm both paths (connections, pools)
					round(nil, nil)
				}
				before := fake.Entries("animus")
				pk := make([]time.Duration, 0, b.N)
				bare := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for range b.N {
					round(&pk, &bare)
				}
				b.StopTimer()
				if got := fake.Entries("animus") - before; got != b.N*batch {
					b.Fatalf("fakeloki holds %d new entries of tenant animus, want %d", got, b.N*batch)
				}
				pr, br := rate(pk)*float64(batch), rate(bare)*float64(batch)
				b.ReportMetric(pr, "entries/s")
				b.ReportMetric(br, "bare-entries/s")
				b.ReportMetric(pr/br, "ratio")
				b.ReportMetric(float64(percentile(pk, 50).Microseconds()), "store-p50-µs")
				b.ReportMetric(float64(percentile(pk, 99).Microseconds()), "store-p99-µs")
			})
		}
	}
}

// minQuerySamples is the least number of calls the query percentiles are
// taken from.
const minQuerySamples = 30

// queryRecorder is a reverse proxy in front of fakeloki that remembers
// the query_range requests passing through, so the benchmark can replay
// exactly what the plugin asked Loki for.
type queryRecorder struct {
	mu   sync.Mutex
	uris []string
}

func (r *queryRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.uris
	r.uris = nil
	return u
}

func recordQueries(tb testing.TB, target string) (*queryRecorder, string) {
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	rec := &queryRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/query_range") {
			rec.mu.Lock()
			rec.uris = append(rec.uris, req.URL.RequestURI())
			rec.mu.Unlock()
		}
		proxy.ServeHTTP(w, req)
	}))
	tb.Cleanup(srv.Close)
	return rec, srv.URL
}

// bareQuery GETs uri from fakeloki as tenant and requires 200.
func bareQuery(tb testing.TB, client *http.Client, base, tenant, uri string) {
	req, err := http.NewRequest(http.MethodGet, base+uri, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("X-Scope-OrgID", tenant)
	req.Header.Set("X-Loki-Response-Encoding-Flags", "categorize-labels")
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("bare query %s: %s %.300s", uri, resp.Status, msg)
	}
}

// BenchmarkLogsLokiQuery100k measures log_storage/query through the
// binary with 100,000 entries in fakeloki (20 streams over the last ~50
// minutes, preloaded by direct protobuf pushes, so the plugin's
// read-your-writes buffer is empty and every answer comes from Loki):
// the daemon's {limit:200} (newest 200, oldest first), the same with
// min_level and since as daemon/logs sends them, and a query using every
// filter (source, min_level, source_name, target_glob), once as the
// default LOKI_STRUCTURED_METADATA=auto reads it (| json parser) and once
// with =on (structured metadata label filters). The plugin talks
// to fakeloki through a recording proxy; after each call the recorded
// query_range requests are replayed straight to fakeloki, which separates
// the plugin's cost from the fake's LogQL evaluation. Reported per kind:
// p50/p99 of the plugin call and of the bare replay, query_range requests
// per call, and the entries returned.
func BenchmarkLogsLokiQuery100k(b *testing.B) {
	const total, perPush = 100_000, 5000
	fake := fakeloki.New(b, fakeloki.Options{})
	t0 := time.Now().Add(-50 * time.Minute)
	step := 50 * time.Minute / total
	client := &http.Client{}
	loaded := time.Now()
	for i := 0; i < total; i += perPush {
		es := make([]lokiEntry, perPush)
		for j := range es {
			es[j] = lokiEntryAt("q", i+j, t0.Add(time.Duration(i+j)*step))
		}
		body, hdr := lokiPush(b, "protobuf", es)
		barePush(b, client, fake.URL(), "animus", body, hdr)
	}
	if got := fake.Entries("animus"); got != total {
		b.Fatalf("fakeloki holds %d entries, want %d", got, total)
	}
	b.Logf("preloaded %d entries in %v", total, time.Since(loaded).Round(time.Millisecond))
	rec, proxied := recordQueries(b, fake.URL())
	// auto (the default) filters source_name/target with | json; on
	// trusts structured metadata alone.
	auto := spawnLoki(b, proxied)
	smOn := spawnLoki(b, proxied, "LOKI_STRUCTURED_METADATA=on")
	since := t0.Add(25 * time.Minute).UTC().Format(time.RFC3339Nano)
	const allFilters = `{"source":"daemon","min_level":"info","source_name":"animus-subject-1","target_glob":"plugin.*.client","limit":200}`
	for _, q := range []struct {
		name, params string
		plugin       *child
	}{
		{"daemon-limit-200", `{"limit":200}`, auto},
		{"daemon-min-level-since", `{"min_level":"warn","since":"` + since + `","limit":200}`, auto},
		{"all-filters-json-parser", allFilters, auto},
		{"all-filters-structured-metadata", allFilters, smOn},
	} {
		plugin := q.plugin
		b.Run(q.name, func(b *testing.B) {
			var res struct {
				Result struct {
					Entries []json.RawMessage `json:"entries"`
				} `json:"result"`
			}
			call := func() time.Duration {
				s := time.Now()
				resp := plugin.roundTrip(b, "log_storage/query", q.params)
				d := time.Since(s)
				res.Result.Entries = nil
				if err := json.Unmarshal(resp, &res); err != nil || len(res.Result.Entries) == 0 {
					b.Fatalf("query %s: %v: %.300s", q.params, err, resp)
				}
				return d
			}
			call() // warm
			for _, u := range rec.take() {
				_, raw, _ := strings.Cut(u, "?")
				if v, err := url.ParseQuery(raw); err == nil && b.N == 1 { // once per query kind
					b.Logf("%s → query_range %s limit=%s direction=%s", q.params, v.Get("query"), v.Get("limit"), v.Get("direction"))
				}
			}
			lat := make([]time.Duration, 0, b.N)
			bare := make([]time.Duration, 0, b.N)
			upstream := 0
			b.ResetTimer()
			sample := func() {
				lat = append(lat, call())
				uris := rec.take()
				upstream += len(uris)
				s := time.Now()
				for _, u := range uris {
					bareQuery(b, client, fake.URL(), "animus", u)
				}
				bare = append(bare, time.Since(s))
			}
			for range b.N {
				sample()
			}
			b.StopTimer()
			// A slow query gets few iterations in -benchtime 2s; the
			// percentiles still need samples, taken off the clock.
			for len(lat) < minQuerySamples {
				sample()
			}
			b.ReportMetric(float64(percentile(lat, 50).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(percentile(lat, 99).Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(percentile(bare, 50).Microseconds())/1000, "bare-p50-ms")
			b.ReportMetric(float64(percentile(bare, 99).Microseconds())/1000, "bare-p99-ms")
			b.ReportMetric(float64(upstream)/float64(len(lat)), "query_range/op")
			b.ReportMetric(float64(len(res.Result.Entries)), "entries")
		})
	}
}
