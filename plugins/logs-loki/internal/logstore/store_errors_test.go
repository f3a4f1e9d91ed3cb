package logstore

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
)

// TestStoreLokiFailures checks how a push failure reaches the host: the
// JSON-RPC code, data.category, the message and data.http_status, whether
// the push was retried (5xx, timeouts and connection errors are; 4xx and
// 429 are not), and that a failed entry is not in the read-your-writes
// buffer.
func TestStoreLokiFailures(t *testing.T) {
	const farBehind = "entry for stream '{level=\"info\"}' has timestamp too old: 2026-05-10T00:00:00Z, oldest acceptable timestamp is: 2026-05-10T01:00:00Z"
	type want struct {
		code     int
		category pluginkit.Category
		msg      string // prefix of the message
		status   string // data.http_status, "" when absent
	}
	for _, c := range []struct {
		name   string
		env    []string
		dead   bool // Loki is unreachable
		fault  func(f *fakeloki.Server)
		want   *want // nil: the store succeeds after retries
		pushes func(n int) bool
	}{
		{name: "429 is quota_exceeded, not retried",
			fault:  func(f *fakeloki.Server) { f.FailPath(pushPath, 1, http.StatusTooManyRequests, "") },
			want:   &want{-32603, pluginkit.CategoryQuotaExceeded, "quota exceeded: store: Ingestion rate limit exceeded", "429"},
			pushes: func(n int) bool { return n == 1 }},
		{name: "400 is bad input with Loki's reason, not retried",
			fault:  func(f *fakeloki.Server) { f.FailPath(pushPath, 1, http.StatusBadRequest, farBehind) },
			want:   &want{-32602, pluginkit.CategoryInvalidRequest, "store rejected by Loki: " + farBehind, "400"},
			pushes: func(n int) bool { return n == 1 }},
		{name: "413 is bad input",
			fault: func(f *fakeloki.Server) {
				f.FailPath(pushPath, 1, http.StatusRequestEntityTooLarge, "request body too large")
			},
			want:   &want{-32602, pluginkit.CategoryInvalidRequest, "store rejected by Loki: request body too large", "413"},
			pushes: func(n int) bool { return n == 1 }},
		{name: "401 is unavailable, not retried",
			fault:  func(f *fakeloki.Server) { f.FailPath(pushPath, 1, http.StatusUnauthorized, "no org id") },
			want:   &want{-32603, pluginkit.CategoryUnavailable, "backend unavailable: store: Loki refused the credentials (HTTP 401)", "401"},
			pushes: func(n int) bool { return n == 1 }},
		{name: "403 is unavailable",
			fault:  func(f *fakeloki.Server) { f.FailPath(pushPath, 1, http.StatusForbidden, "forbidden") },
			want:   &want{-32603, pluginkit.CategoryUnavailable, "backend unavailable: store: Loki refused the credentials (HTTP 403)", "403"},
			pushes: func(n int) bool { return n == 1 }},
		{name: "404 names LOKI_URL",
			fault:  func(f *fakeloki.Server) { f.FailPath(pushPath, 1, http.StatusNotFound, "404 page not found") },
			want:   &want{-32603, pluginkit.CategoryUnavailable, "backend unavailable: store: Loki endpoint not found (HTTP 404); check LOKI_URL", "404"},
			pushes: func(n int) bool { return n == 1 }},
		{name: "persistent 503 is retried, then unavailable",
			fault: func(f *fakeloki.Server) {
				f.FailPath(pushPath, -1, http.StatusServiceUnavailable, "Ingester not ready")
			},
			want:   &want{-32603, pluginkit.CategoryUnavailable, "backend unavailable: store: Loki answered 503: Ingester not ready", "503"},
			pushes: func(n int) bool { return n > 1 }},
		{name: "one 500 is retried and the store succeeds",
			fault:  func(f *fakeloki.Server) { f.FailPath(pushPath, 1, http.StatusInternalServerError, "boom") },
			pushes: func(n int) bool { return n == 2 }},
		{name: "two 502s are retried and the store succeeds",
			fault:  func(f *fakeloki.Server) { f.FailPath(pushPath, 2, http.StatusBadGateway, "bad gateway") },
			pushes: func(n int) bool { return n == 3 }},
		{name: "unreachable Loki is unavailable",
			dead: true,
			want: &want{-32603, pluginkit.CategoryUnavailable, "backend unavailable: store: Loki connection refused", ""}},
		{name: "every attempt timing out is unavailable",
			env:    []string{config.EnvTimeout, "100ms"},
			fault:  func(f *fakeloki.Server) { f.HangPath(pushPath, -1) },
			want:   &want{-32603, pluginkit.CategoryUnavailable, "backend unavailable: store: Loki request timed out (LOKI_TIMEOUT)", ""},
			pushes: func(n int) bool { return n > 1 }},
		{name: "a push outliving the store budget is unavailable",
			fault:  func(f *fakeloki.Server) { f.HangPath(pushPath, -1) },
			want:   &want{-32603, pluginkit.CategoryUnavailable, "backend unavailable: store: Loki request timed out (LOKI_TIMEOUT)", ""},
			pushes: func(n int) bool { return n == 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, h := serveFaulty(t, c.dead, c.fault, c.env...)
			params := storeParams(t, wireEntryOf("e1", base(), "info", "daemon", "", "daemon.x", ""))
			res, e := h.call("log_storage/store", params)
			switch {
			case c.want == nil && e != nil:
				t.Fatalf("error %d %q, want success", e.Code, e.Message)
			case c.want == nil && string(res) != `{"stored":1}`:
				t.Fatalf("result %s", res)
			case c.want != nil && e == nil:
				t.Fatalf("result %s, want an error", res)
			case c.want != nil:
				if e.Code != c.want.code || e.Data["category"] != string(c.want.category) || !strings.HasPrefix(e.Message, c.want.msg) {
					t.Fatalf("error %d %q %v\nwant %d %s %q…", e.Code, e.Message, e.Data, c.want.code, c.want.category, c.want.msg)
				}
				if got := e.Data["http_status"]; (c.want.status == "" && got != nil) || (c.want.status != "" && fmt.Sprint(got) != c.want.status) {
					t.Fatalf("data.http_status %v, want %q", got, c.want.status)
				}
			}
			if c.pushes != nil && !c.pushes(f.RequestsTo(pushPath)) {
				t.Errorf("%d pushes", f.RequestsTo(pushPath))
			}
			// A failed store leaves nothing behind to read; a stored
			// entry reads back once despite the retries.
			f.ClearFaults()
			want := 1
			if c.want != nil {
				want = 0
			}
			if c.dead {
				if n := len(h.svc.buf.matching(0, 1<<62, func(record) bool { return true })); n != want {
					t.Fatalf("buffer holds %d entries", n)
				}
				return
			}
			var q QueryResult
			h.kit.OK(h.t, "log_storage/query", map[string]any{}, &q)
			if len(q.Entries) != want {
				t.Fatalf("query after the store found %v", ids(q.Entries))
			}
		})
	}
}

// TestStoreCancelled: the host's $/cancelRequest ends a store stuck on
// Loki with -32002 cancelled, and a cancellation is not a Loki failure
// (health stays healthy).
func TestStoreCancelled(t *testing.T) {
	f := newLoki(t)
	h := serve(t, New(testConfig(t, f.URL())))
	f.HangPath(pushPath, 1)
	id := h.start("log_storage/store", storeParams(t, wireEntryOf("e1", base(), "info", "daemon", "", "d", "")))
	waitUntil(t, "the push to reach Loki", func() bool { return f.RequestsTo(pushPath) == 1 })
	h.cancel(id)
	resp, _ := h.response(id)
	if resp.Error == nil || resp.Error.Code != pluginkit.CodeRequestCancelled || resp.Error.Data["category"] != "cancelled" {
		t.Fatalf("response %s", resp.Raw)
	}
	var health struct {
		Status    string `json:"status"`
		LastError string `json:"last_error"`
	}
	h.kit.OK(h.t, "health/check", nil, &health)
	if health.Status != "healthy" || health.LastError != "" {
		t.Fatalf("health %+v after a cancelled store", health)
	}
}
