package logstore

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
)

// Loki's endpoints, for the fake's per-path faults and counters.
const (
	pushPath  = "/loki/api/v1/push"
	queryPath = "/loki/api/v1/query_range"
	tailPath  = "/loki/api/v1/tail"
	readyPath = "/ready"
	labelPath = "/loki/api/v1/labels"
)

// newLoki starts the project's fake Loki, with Loki's defaults, for one
// test.
func newLoki(t testing.TB) *fakeloki.Server {
	t.Helper()
	return fakeloki.New(t, fakeloki.Options{})
}

// serveFaulty serves a Service configured by env against a fresh fake
// Loki, or against a port nothing listens on when dead, then injects fault
// (if any) into the fake.
func serveFaulty(t *testing.T, dead bool, fault func(*fakeloki.Server), env ...string) (*fakeloki.Server, *host) {
	t.Helper()
	f := newLoki(t)
	url := f.URL()
	if dead {
		url = deadURL(t)
	}
	h := serve(t, New(testConfig(t, url, env...)))
	if fault != nil {
		fault(f)
	}
	return f, h
}

// storedEntry is one entry Loki holds, with its stream's labels.
type storedEntry struct {
	labels map[string]string
	fakeloki.Entry
}

// stored lists what Loki holds for the default tenant, stream by stream.
func stored(f *fakeloki.Server) []storedEntry {
	var out []storedEntry
	for _, st := range f.Streams("fake") {
		for _, e := range st.Entries {
			out = append(out, storedEntry{st.Labels, e})
		}
	}
	return out
}

// pushForeign writes streams (label set → entries) into Loki the way
// another agent (Promtail, Alloy) does: a snappy protobuf push.
func pushForeign(t testing.TB, f *fakeloki.Server, streams map[string][]fakeloki.Entry) {
	t.Helper()
	resp, err := http.Post(f.URL()+pushPath, "application/x-protobuf", bytes.NewReader(fakeloki.EncodeProtoPush(streams)))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("foreign push answered %d", resp.StatusCode)
	}
}

// marshal is v as JSON; a string is taken to be JSON already.
func marshal(t testing.TB, v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wireEntryOf builds a LogEntry as the host sends it. sourceName "" omits
// source_name; fields "" omits fields.
func wireEntryOf(id string, ts time.Time, level, source, sourceName, target, fields string) map[string]any {
	m := map[string]any{
		"id": id, "ts": ts.UTC().Format(time.RFC3339Nano), "level": level, "source": source,
		"target": target, "message": "message of " + id,
	}
	if sourceName != "" {
		m["source_name"] = sourceName
	}
	if fields != "" {
		m["fields"] = json.RawMessage(fields)
	}
	return m
}

// storeParams wraps entries as log_storage/store's params.
func storeParams(t testing.TB, entries ...map[string]any) StoreParams {
	t.Helper()
	raws := make([]json.RawMessage, len(entries))
	for i, e := range entries {
		raws[i] = json.RawMessage(marshal(t, e))
	}
	return StoreParams{Entries: &raws}
}

// mustStore stores entries through svc's handler directly, as another
// plugin process sharing the same Loki would.
func mustStore(t testing.TB, svc *Service, entries ...map[string]any) {
	t.Helper()
	res, err := svc.store(context.Background(), storeParams(t, entries...))
	if err != nil || res.Stored != len(entries) {
		t.Fatalf("store: %+v %v", res, err)
	}
}

// mustQuery runs log_storage/query's handler directly.
func mustQuery(t testing.TB, svc *Service, p QueryParams) QueryResult {
	t.Helper()
	res, err := svc.query(context.Background(), p)
	if err != nil {
		t.Fatalf("query %+v: %v", p, err)
	}
	return res
}

// ids lists the ids of entries in order.
func ids(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func i64(v int64) *int64 { return &v }

// base is a timestamp inside every default query window: an hour ago,
// whole seconds, so tests can place entries at exact offsets.
func base() time.Time { return time.Now().Add(-time.Hour).Truncate(time.Second).UTC() }

// sameJSON reports whether a and b marshal to equal JSON values (key order
// aside).
func sameJSON(t testing.TB, a, b any) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(marshal(t, a)), &x) != nil || json.Unmarshal([]byte(marshal(t, b)), &y) != nil {
		t.Fatalf("not JSON: %v / %v", a, b)
	}
	return reflect.DeepEqual(x, y)
}

// deadURL is the URL of a port nothing listens on: connections to it are
// refused at once.
func deadURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr
}

// waitUntil polls cond (state outside the wire, such as the fake's open
// tails) until it holds, failing after waitLimit.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", waitLimit, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// subscribers counts the live tails subscribed to the buffer.
func subscribers(b *buffer) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}
