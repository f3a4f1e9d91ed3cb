package logstore

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/cursor"
)

// TestQueryRejectsBadInput: a LogQuery that cannot be run is -32602 with
// data.category invalid_request (not_found for a cursor this plugin did
// not issue) and the offending field in data.field, for query and tail
// alike, before anything is sent to Loki.
func TestQueryRejectsBadInput(t *testing.T) {
	f := newLoki(t)
	svc := New(testConfig(t, f.URL(), config.EnvMaxQueryWindow, "24h"))
	h := serve(t, svc)
	now := time.Now().UTC()
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }
	pl, err := svc.plan(QueryParams{SourceName: sp("a")}, now)
	if err != nil {
		t.Fatal(err)
	}
	otherFilter := cursor.Encode(cursor.Cursor{Dir: cursor.Backward, TS: pl.start, Q: pl.hash, Start: pl.start, End: pl.end})
	for _, c := range []struct {
		name     string
		params   string
		category pluginkit.Category
		field    string // data.field, "" when absent
		msg      string
	}{
		{"unknown min_level", `{"min_level":"fatal"}`, pluginkit.CategoryInvalidRequest, "min_level", `field "min_level" must be one of trace, debug, info, warn, error, got "fatal"`},
		{"upper-case source", `{"source":"Daemon"}`, pluginkit.CategoryInvalidRequest, "source", `field "source" must be one of daemon, plugin, cli, workflow`},
		{"since not RFC 3339", `{"since":"yesterday"}`, pluginkit.CategoryInvalidRequest, "since", `field "since" must be an RFC 3339 timestamp, got "yesterday"`},
		{"until a date only", `{"until":"2026-05-17"}`, pluginkit.CategoryInvalidRequest, "until", `field "until" must be an RFC 3339 timestamp`},
		{"since after until", fmt.Sprintf(`{"since":%q,"until":%q}`, at(0), at(-time.Minute)), pluginkit.CategoryInvalidRequest, "", "invalid request: since ("},
		{"explicit window over LOKI_MAX_QUERY_WINDOW", fmt.Sprintf(`{"since":%q,"until":%q}`, at(-48*time.Hour), at(0)), pluginkit.CategoryInvalidRequest, "", "is longer than LOKI_MAX_QUERY_WINDOW=24h0m0s"},
		{"negative limit", `{"limit":-1}`, pluginkit.CategoryInvalidRequest, "limit", `field "limit" must not be negative`},
		{"limit not a number", `{"limit":"ten"}`, pluginkit.CategoryInvalidRequest, "", ""},
		{"follow not a bool", `{"follow":"yes"}`, pluginkit.CategoryInvalidRequest, "", ""},
		{"garbage cursor", `{"cursor":"not-a-cursor!"}`, pluginkit.CategoryNotFound, "cursor", "not found: cursor: "},
		{"cursor of another version", fmt.Sprintf(`{"cursor":%q}`, "eyJ2IjoyfQ"), pluginkit.CategoryNotFound, "cursor", "not found: cursor: cursor version is not supported"},
		{"cursor issued for another filter", fmt.Sprintf(`{"source_name":"b","cursor":%q}`, otherFilter), pluginkit.CategoryInvalidRequest, "cursor", "the cursor was issued for a different filter"},
	} {
		for _, method := range []string{"log_storage/query", "log_storage/tail"} {
			t.Run(c.name+"/"+method, func(t *testing.T) {
				e := h.kit.Fails(h.t, method, c.params, pluginkit.CodeInvalidParams, c.category)
				if !strings.Contains(e.Message, c.msg) {
					t.Errorf("message %q, want it to contain %q", e.Message, c.msg)
				}
				if c.field != "" && e.Data["field"] != c.field {
					t.Errorf("data %v, want field %s", e.Data, c.field)
				}
			})
		}
	}
	if n := f.RequestsTo(queryPath) + f.RequestsTo(tailPath); n != 0 {
		t.Fatalf("%d requests reached Loki for invalid queries", n)
	}
}

// TestQueryLokiFailures: query_range failures map to the log-storage
// error codes, and a query is not retried (the host retries reads).
func TestQueryLokiFailures(t *testing.T) {
	for _, c := range []struct {
		name     string
		env      []string
		dead     bool
		fault    func(f *fakeloki.Server)
		code     int
		category pluginkit.Category
		msg      string
		status   string
	}{
		{name: "400 is bad input with Loki's reason",
			fault: func(f *fakeloki.Server) {
				f.FailPath(queryPath, 1, http.StatusBadRequest, "the query time range exceeds the limit (query length: 800h0m0s, limit: 721h0m0s)")
			},
			code: -32602, category: pluginkit.CategoryInvalidRequest, status: "400",
			msg: "query rejected by Loki: the query time range exceeds the limit (query length: 800h0m0s, limit: 721h0m0s)"},
		{name: "429 is quota_exceeded",
			fault: func(f *fakeloki.Server) {
				f.FailPath(queryPath, 1, http.StatusTooManyRequests, "too many outstanding requests")
			},
			code: -32603, category: pluginkit.CategoryQuotaExceeded, status: "429", msg: "quota exceeded: query: too many outstanding requests"},
		{name: "500 is unavailable with Loki's message",
			fault: func(f *fakeloki.Server) {
				f.FailPath(queryPath, 1, http.StatusInternalServerError, "rpc error: code = Unavailable")
			},
			code: -32603, category: pluginkit.CategoryUnavailable, status: "500", msg: "backend unavailable: query: Loki answered 500: rpc error: code = Unavailable"},
		{name: "401 is unavailable naming the credentials",
			fault: func(f *fakeloki.Server) { f.FailPath(queryPath, 1, http.StatusUnauthorized, "Unauthorized") },
			code:  -32603, category: pluginkit.CategoryUnavailable, status: "401", msg: "backend unavailable: query: Loki refused the credentials (HTTP 401)"},
		{name: "a long Loki message is clipped",
			fault: func(f *fakeloki.Server) { f.FailPath(queryPath, 1, http.StatusBadGateway, strings.Repeat("é", 600)) },
			code:  -32603, category: pluginkit.CategoryUnavailable, status: "502", msg: "backend unavailable: query: Loki answered 502: " + strings.Repeat("é", 256) + "…"},
		{name: "unreachable Loki is unavailable", dead: true,
			code: -32603, category: pluginkit.CategoryUnavailable, msg: "backend unavailable: query: Loki connection refused"},
		{name: "a timeout is unavailable naming LOKI_TIMEOUT",
			env:   []string{config.EnvTimeout, "100ms"},
			fault: func(f *fakeloki.Server) { f.HangPath(queryPath, 1) },
			code:  -32603, category: pluginkit.CategoryUnavailable, msg: "backend unavailable: query: Loki request timed out (LOKI_TIMEOUT)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, h := serveFaulty(t, c.dead, c.fault, c.env...)
			e := h.kit.Fails(h.t, "log_storage/query", map[string]any{"limit": 10}, c.code, c.category)
			if e.Message != c.msg {
				t.Errorf("message\n got %q\nwant %q", e.Message, c.msg)
			}
			if got := e.Data["http_status"]; (c.status == "" && got != nil) || (c.status != "" && fmt.Sprint(got) != c.status) {
				t.Errorf("data.http_status %v, want %q", got, c.status)
			}
			if !c.dead && f.RequestsTo(queryPath) != 1 {
				t.Errorf("%d query_range requests, want 1 (no retry)", f.RequestsTo(queryPath))
			}
		})
	}
}

// TestUnconfigured: without LOKI_URL every data method answers -32603
// unavailable naming the variable and how to set it; schema still works.
func TestUnconfigured(t *testing.T) {
	h := serve(t, New(testConfig(t, "")))
	const msg = "backend unavailable: LOKI_URL unset: set LOKI_URL to Loki's base URL, e.g. http://loki:3100"
	for _, c := range []struct{ method, params string }{
		{"log_storage/store", `{"entries":[]}`},
		{"log_storage/query", `{}`},
		{"log_storage/tail", `{"follow":true}`},
	} {
		if e := h.kit.Fails(h.t, c.method, c.params, pluginkit.CodeInternalError, pluginkit.CategoryUnavailable); e.Message != msg {
			t.Errorf("%s: %q", c.method, e.Message)
		}
	}
}
