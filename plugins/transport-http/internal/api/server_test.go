package api

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The local routes answer from the transport itself.
func TestLocalRoutes(t *testing.T) {
	started := time.Now().Add(-2 * time.Second).UTC().Truncate(time.Millisecond)
	info := Info{BoundAddr: "127.0.0.1:9", StartedAt: started, ProjectRoot: "/p", Kinds: []string{"http"}, Auth: false}
	h := newHarness(t, Options{Info: info}, nil)

	var health struct {
		Status    string    `json:"status"`
		StartedAt time.Time `json:"started_at"`
		UptimeMS  int64     `json:"uptime_ms"`
	}
	h.do(request{method: "GET", target: "/healthz"}).wantData(t, &health)
	if health.Status != "ok" || !health.StartedAt.Equal(started) || health.UptimeMS < 2000 {
		t.Errorf("healthz %+v", health)
	}
	var got Info
	h.do(request{method: "GET", target: "/api/v1/transport"}).wantData(t, &got)
	if got.BoundAddr != info.BoundAddr || got.ProjectRoot != "/p" || !got.StartedAt.Equal(started) || len(got.Kinds) != 1 {
		t.Errorf("transport %+v", got)
	}
	// No daemon: liveness holds, readiness fails.
	h.do(request{method: "GET", target: "/readyz"}).wantErr(t, 503, "daemon_unreachable")
}

// readyz: a daemon that answers, even with an error, is ready.
func TestReadyz(t *testing.T) {
	cases := []struct {
		name   string
		reply  reply
		status int
		code   string
	}{
		{"answers", reply{}, 200, ""},
		{"answers an error", reply{fault: &fault{-32603, "internal: x", "internal"}}, 200, ""},
		{"hangs up", reply{drop: true}, 502, "wire_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newFakeDaemon(t)
			d.set("daemon/status", c.reply)
			x := newHarness(t, Options{}, d).do(request{method: "GET", target: "/readyz"})
			if c.status != 200 {
				x.wantErr(t, c.status, c.code)
				return
			}
			var ready map[string]string
			x.wantData(t, &ready)
			if ready["status"] != "ready" || ready["daemon"] != "reachable" {
				t.Errorf("%v", ready)
			}
		})
	}
}

// A broken connection or a silent daemon is logged for the operator; the
// daemon's own errors are the client's business and are not.
func TestControlFailuresAreLogged(t *testing.T) {
	cases := []struct {
		reply  reply
		status int
		logged string
	}{
		{reply{drop: true}, 502, "wire_error"},
		{reply{stall: true}, 504, "daemon_timeout"},
		{reply{fault: &fault{-32602, "not found: x", "not_found"}}, 404, ""},
	}
	for _, c := range cases {
		var logs bytes.Buffer
		d := newFakeDaemon(t)
		d.setAll(c.reply)
		h := newHarness(t, Options{ControlTimeout: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, d)
		x := h.do(request{method: "GET", target: "/api/v1/workflows/wf-1"})
		if x.status != c.status {
			t.Fatalf("%d %s", x.status, x.body)
		}
		if got := logs.String(); (c.logged == "") != (got == "") || !strings.Contains(got, c.logged) ||
			(c.logged != "" && !strings.Contains(got, "method=workflow/get")) {
			t.Errorf("logged %q, want %q", got, c.logged)
		}
	}
}

// A handler panic is a 500 envelope and a log line; http.ErrAbortHandler
// is passed on, as net/http expects.
func TestRecoverer(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	h := s.recoverer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/x", nil))
	if w.Code != 500 || errCode(t, w) != "internal" || !strings.Contains(logs.String(), "boom") {
		t.Errorf("%d %s; log %q", w.Code, w.Body, logs.String())
	}
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler", v)
		}
	}()
	s.recoverer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })).
		ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
}

// Data that cannot be encoded is a 500, not a half-written 200.
func TestWriteDataFailure(t *testing.T) {
	w := httptest.NewRecorder()
	writeData(w, map[string]any{"c": make(chan int)})
	if w.Code != 500 || errCode(t, w) != "internal" {
		t.Errorf("%d %s", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	writeOK(w, nil)
	if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"ok":true,"data":null}` {
		t.Errorf("%d %s", w.Code, w.Body)
	}
}
