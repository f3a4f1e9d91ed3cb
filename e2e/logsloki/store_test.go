package logsloki

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// TestStoreGroupsOnePushAndRoundTrips stores entries of three label sets
// in one call: one synchronous push, {stored: 3}, and a query returns
// every entry unchanged, including the original ts strings (nanoseconds,
// +00:00) and nested fields.
func TestStoreGroupsOnePushAndRoundTrips(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	h := b.start(nil)
	base := time.Now().Add(-time.Minute).Truncate(time.Second)
	e1 := b.entry("a", base.Add(123456789), "info", "daemon", "daemon.scheduler")
	e2 := b.entry("b", base.Add(2*time.Second), "error", "plugin", "plugin.x")
	e2.TS = base.Add(2*time.Second).UTC().Format("2006-01-02T15:04:05") + "+00:00"
	e2.Fields = json.RawMessage(`{"nested":{"a":[1,2,{"b":null}]},"s":"<&>"}`)
	e3 := b.entry("c", base.Add(3*time.Second+7), "info", "workflow", "wf.step")
	e3.SourceName = nil
	e3.Fields = nil
	pushes := 0
	if b.fake != nil {
		pushes = b.fake.Pushes()
	}
	store(t, h, e1, e2, e3)
	if b.fake != nil && b.fake.Pushes()-pushes != 1 {
		t.Fatalf("%d pushes for one store call, want 1", b.fake.Pushes()-pushes)
	}
	// Read back from a fresh process, so the answer comes from Loki and
	// not from the read-your-writes buffer.
	h2 := b.start(nil)
	res := query(t, h2, map[string]any{"target_glob": b.uniq + ".**", "limit": 10})
	got := res.Entries
	if len(got) != 3 {
		t.Fatalf("got %d entries: %+v", len(got), got)
	}
	want := []logEntry{e1, e2, e3}
	for i := range want {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(want[i])
		if string(g) != string(w) {
			t.Errorf("entry %d:\n got %s\nwant %s", i, g, w)
		}
	}
	if b.fake != nil {
		// Loki holds the entry at the emitter's nanosecond.
		ns := lokiTimestamps(t, b.fake.URL(), `{service_name="animus", source="daemon"}`)
		if !contains(ns, strconv.FormatInt(base.Add(123456789).UnixNano(), 10)) {
			t.Fatalf("Loki timestamps %v lack the entry's exact ns", ns)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// lokiTimestamps reads the entry timestamps of a selector straight from
// fakeloki's query_range.
func lokiTimestamps(t testing.TB, base, selector string) []string {
	t.Helper()
	q := url.Values{"query": {selector}, "start": {strconv.FormatInt(time.Now().Add(-time.Hour).UnixNano(), 10)}, "limit": {"1000"}}
	resp, err := http.Get(base + "/loki/api/v1/query_range?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Data struct {
			Result []struct {
				Values [][]string `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	var out []string
	for _, s := range r.Data.Result {
		for _, v := range s.Values {
			out = append(out, v[0])
		}
	}
	return out
}

// TestStoreErrorMapping: 429 → quota_exceeded without retry; 400 →
// -32602 with Loki's reason; 5xx, timeouts and refused connections are
// retried inside the budget, then unavailable; a transient 5xx is retried
// to success without duplicating the entry.
func TestStoreErrorMapping(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	b.needFake("FailNext, SetLatency and push counters")
	h := b.start(map[string]string{"LOKI_TIMEOUT": "400ms"})
	now := time.Now()

	t.Run("429 quota", func(t *testing.T) {
		p := b.fake.Pushes()
		r0 := b.fake.Requests()
		b.fake.FailNext(1, http.StatusTooManyRequests)
		e := e2etest.Failure(t, h, "log_storage/store", map[string]any{"entries": []logEntry{b.entry("q", now, "info", "daemon", "t")}})
		wantErr(t, e, -32603, "quota_exceeded", "quota exceeded")
		if b.fake.Requests()-r0 != 1 || b.fake.Pushes() != p {
			t.Fatalf("429 was retried: %d requests", b.fake.Requests()-r0)
		}
	})
	t.Run("400 reason", func(t *testing.T) {
		old := b.entry("old", now.Add(-200*time.Hour), "info", "daemon", "t")
		e := e2etest.Failure(t, h, "log_storage/store", map[string]any{"entries": []logEntry{old}})
		wantErr(t, e, -32602, "invalid_request", "timestamp too old")
	})
	t.Run("5xx retried to success without duplicates", func(t *testing.T) {
		before := b.fake.Entries("fake")
		b.fake.FailNext(2, http.StatusServiceUnavailable)
		r0 := b.fake.Requests()
		store(t, h, b.entry("r", now, "info", "daemon", "t"))
		if n := b.fake.Requests() - r0; n != 3 {
			t.Fatalf("%d requests, want 2 failures + 1 success", n)
		}
		// An at-least-once writer resends: still one entry in Loki.
		store(t, h, b.entry("r", now, "info", "daemon", "t"))
		if n := b.fake.Entries("fake") - before; n != 1 {
			t.Fatalf("Loki holds %d copies, want 1", n)
		}
	})
	t.Run("5xx persistent", func(t *testing.T) {
		b.fake.FailNext(1000, http.StatusInternalServerError)
		defer b.fake.FailNext(0, 0)
		start := time.Now()
		e := e2etest.Failure(t, h, "log_storage/store", map[string]any{"entries": []logEntry{b.entry("p", now, "info", "daemon", "t")}})
		wantErr(t, e, -32603, "unavailable", "backend unavailable")
		if d := time.Since(start); d > 4*time.Second {
			t.Fatalf("gave up after %s, want within ~3 s", d)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		b.fake.SetLatency(time.Second)
		defer b.fake.SetLatency(0)
		e := e2etest.Failure(t, h, "log_storage/store", map[string]any{"entries": []logEntry{b.entry("slow", now, "info", "daemon", "t")}})
		wantErr(t, e, -32603, "unavailable", "timed out")
	})
	t.Run("connection refused", func(t *testing.T) {
		dead := fakeloki.New(t, fakeloki.Options{})
		u := dead.URL()
		dead.Close()
		h2 := startPlugin(t, map[string]string{"LOKI_URL": u})
		e := e2etest.Failure(t, h2, "log_storage/store", map[string]any{"entries": []logEntry{b.entry("x", now, "info", "daemon", "t")}})
		wantErr(t, e, -32603, "unavailable", "connection refused")
	})
	t.Run("invalid entry sends nothing", func(t *testing.T) {
		p := b.fake.Pushes()
		bad := b.entry("bad", now, "loud", "daemon", "t")
		e := e2etest.Failure(t, h, "log_storage/store", map[string]any{"entries": []logEntry{b.entry("ok", now, "info", "daemon", "t"), bad}})
		wantErr(t, e, -32602, "invalid_request", "entries[1]")
		if b.fake.Pushes() != p {
			t.Fatal("a call with an invalid entry pushed")
		}
	})
}

// TestStoreTruncatesLongLines: a message over Loki's line limit is cut and
// marked in fields, not dropped; other fields survive.
func TestStoreTruncatesLongLines(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	h := b.start(nil)
	e := b.entry("big", time.Now(), "info", "daemon", "big")
	e.Message = strings.Repeat("é", 200_000) // 400 KB
	e.Fields = json.RawMessage(`{"keep":"me"}`)
	store(t, h, e)
	got := query(t, b.start(nil), map[string]any{"source_name": b.uniq}).Entries
	if len(got) != 1 {
		t.Fatalf("got %d entries", len(got))
	}
	var f map[string]any
	_ = json.Unmarshal(got[0].Fields, &f)
	if f["_animus_truncated"] != true || f["keep"] != "me" {
		t.Fatalf("fields %s", got[0].Fields)
	}
	if n := len(got[0].Message); n >= len(e.Message) || n < 200_000 || !strings.HasPrefix(e.Message, got[0].Message) {
		t.Fatalf("message of %d bytes, want a prefix of the original shorter than %d", n, len(e.Message))
	}
}
