package logslokivl

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/victorialogs"
)

// encodeJSONPush is the Loki JSON push body for entries placed by m:
// streams grouped by label set, values [ns, line, structured metadata].
func encodeJSONPush(t *testing.T, m mapping, entries []logEntry) []byte {
	t.Helper()
	type stream struct {
		Stream map[string]string `json:"stream"`
		Values [][]any           `json:"values"`
	}
	var streams []*stream
	byKey := map[string]*stream{}
	for _, e := range entries {
		ls := m.labels(e)
		key := streamString(ls)
		s := byKey[key]
		if s == nil {
			s = &stream{Stream: ls}
			byKey[key] = s
			streams = append(streams, s)
		}
		v := []any{nsOf(t, e), lineOf(t, e)}
		if sm := m.metadata(e); sm != nil {
			v = append(v, sm)
		}
		s.Values = append(s.Values, v)
	}
	b, err := json.Marshal(map[string]any{"streams": streams})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// encodeProtoPush is the same push as snappy-compressed protobuf.
func encodeProtoPush(t *testing.T, m mapping, entries []logEntry) []byte {
	t.Helper()
	streams := map[string][]fakeloki.Entry{}
	for _, e := range entries {
		ts, err := time.Parse(time.RFC3339Nano, e.TS)
		if err != nil {
			t.Fatal(err)
		}
		key := streamString(m.labels(e))
		streams[key] = append(streams[key], fakeloki.Entry{TS: ts, Line: lineOf(t, e), SM: m.metadata(e)})
	}
	return fakeloki.EncodeProtoPush(streams)
}

func nsOf(t *testing.T, e logEntry) string {
	ts, err := time.Parse(time.RFC3339Nano, e.TS)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(ts.UnixNano(), 10)
}

func lineOf(t *testing.T, e logEntry) string {
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func gzipped(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pushMeter reports how VictoriaLogs' per-format push counters moved
// since its previous reading (each reading costs up to a second, see
// victorialogs.Server.PushCounts, so consecutive cases share them).
type pushMeter struct {
	vl   *victorialogs.Server
	last victorialogs.PushCounts
}

func newPushMeter(t *testing.T, vl *victorialogs.Server) *pushMeter {
	t.Helper()
	c, err := vl.PushCounts(e2etest.Ctx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return &pushMeter{vl: vl, last: c}
}

func (m *pushMeter) delta(t *testing.T) victorialogs.PushCounts {
	t.Helper()
	c, err := m.vl.PushCounts(e2etest.Ctx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	d := c.Sub(m.last)
	m.last = c
	return d
}

// TestHarnessDirectPush proves the harness without the plugin: the
// intended mapping pushed by hand, in each Loki encoding, must read back
// through LogsQL exactly as the plugin tests expect, under the tenant
// X-Scope-OrgID named and no other.
func TestHarnessDirectPush(t *testing.T) {
	vl := victorialogs.FromEnv(t)
	meter := newPushMeter(t, vl)
	withSM := mapping{serviceName: "animus", extra: map[string]string{"env": "e2e"}, sm: true}
	withoutSM := mapping{serviceName: "animus", extra: map[string]string{"env": "e2e"}}
	for _, c := range []struct {
		name        string
		m           mapping
		contentType string
		encoding    string
		body        func(*testing.T, mapping, []logEntry) []byte
		want        victorialogs.PushCounts
	}{
		{"json", withSM, "application/json", "", encodeJSONPush, victorialogs.PushCounts{JSON: 1}},
		{"json+gzip", withSM, "application/json", "gzip", func(t *testing.T, m mapping, es []logEntry) []byte {
			return gzipped(t, encodeJSONPush(t, m, es))
		}, victorialogs.PushCounts{JSON: 1}},
		{"protobuf+snappy", withSM, "application/x-protobuf", "", encodeProtoPush, victorialogs.PushCounts{Protobuf: 1}},
		{"protobuf without structured metadata", withoutSM, "application/x-protobuf", "", encodeProtoPush, victorialogs.PushCounts{Protobuf: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := e2etest.Ctx(t, 30*time.Second)
			tenant := victorialogs.NewTenant()
			base := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
			entries := sampleEntries(runID(), base)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, vl.PushURL(), bytes.NewReader(c.body(t, c.m, entries)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", c.contentType)
			if c.encoding != "" {
				req.Header.Set("Content-Encoding", c.encoding)
			}
			req.Header.Set("X-Scope-OrgID", tenant.OrgID())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("push: %s %s", resp.Status, msg)
			}
			rows, err := vl.WaitRows(ctx, tenant, "*", base.Add(-time.Hour), base.Add(time.Hour), len(entries))
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, c.m, entries, rows)
			if got := meter.delta(t); got != c.want {
				t.Errorf("push counters moved by %+v, want %+v", got, c.want)
			}
			other := victorialogs.Tenant{AccountID: tenant.AccountID + 1, ProjectID: tenant.ProjectID}
			if rows, err := vl.Query(ctx, other, "*", base.Add(-time.Hour), base.Add(time.Hour)); err != nil || len(rows) != 0 {
				t.Errorf("tenant %s sees %d rows (%v), want none", other.OrgID(), len(rows), err)
			}
		})
	}
}

// TestHarnessCatchesMistakes guards against a checker that cannot fail:
// rows pushed with a wrong mapping must be reported.
func TestHarnessCatchesMistakes(t *testing.T) {
	vl := victorialogs.FromEnv(t)
	ctx := e2etest.Ctx(t, 30*time.Second)
	right := mapping{serviceName: "animus", sm: true}
	for _, c := range []struct {
		name   string
		pushed mapping
		mangle func(*logEntry)
	}{
		{"target as a stream label", mapping{serviceName: "animus", extra: map[string]string{"target": "x"}, sm: true}, nil},
		{"no structured metadata", mapping{serviceName: "animus"}, nil},
		{"other service_name", mapping{serviceName: "unknown_service", sm: true}, nil},
		{"timestamp off by 1 ns", right, func(e *logEntry) {
			ts, _ := time.Parse(time.RFC3339Nano, e.TS)
			e.TS = ts.Add(time.Nanosecond).Format(time.RFC3339Nano)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tenant := victorialogs.NewTenant()
			base := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
			entries := sampleEntries(runID(), base)[:1]
			pushed := append([]logEntry(nil), entries...)
			if c.mangle != nil {
				c.mangle(&pushed[0])
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, vl.PushURL(), bytes.NewReader(encodeJSONPush(t, c.pushed, pushed)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Scope-OrgID", tenant.OrgID())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			rows, err := vl.WaitRows(ctx, tenant, "*", base.Add(-time.Hour), base.Add(time.Hour), 1)
			if err != nil {
				t.Fatal(err)
			}
			var probe recorder
			probe.run(func(r reporter) { checkRows(r, right, entries, rows) })
			if len(probe.msgs) == 0 {
				t.Errorf("checkRows accepted a row pushed with %s: %v", c.name, map[string]string(rows[0]))
			}
		})
	}
}
