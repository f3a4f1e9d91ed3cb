package transporthttp

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// transport/start binds and answers an accurate TransportInfo without
// touching the control socket; the first request that needs the daemon
// dials it, and later ones reuse the connection.
func TestStartDoesNotDialTheSocket(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	var info struct {
		BoundAddr string `json:"bound_addr"`
		StartedAt string `json:"started_at"`
	}
	if err := json.Unmarshal(g.info, &info); err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(time.RFC3339Nano, info.StartedAt); err != nil {
		t.Errorf("started_at %q: %v", info.StartedAt, err)
	}
	if strings.HasSuffix(info.BoundAddr, ":0") {
		t.Errorf("bound_addr %q still has port 0", info.BoundAddr)
	}
	wantOK(t, "GET /healthz", g.get("/healthz"), nil)
	if n := g.d.Connections(); n != 0 {
		t.Fatalf("the daemon saw %d connection(s) after start and /healthz, want 0", n)
	}
	for i := 0; i < 5; i++ {
		wantOK(t, "GET /api/v1/daemon/status", g.get("/api/v1/daemon/status"), nil)
	}
	if n := g.d.Connections(); n != 1 {
		t.Errorf("5 sequential requests used %d control connections, want 1 persistent one", n)
	}
}

// Bind failures carry data.category; bad addresses are -32602 (issue #9).
func TestStartBindFailures(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	tokenEnv := map[string]string{"ANIMUS_HTTP_TOKEN": testToken}
	cases := []struct {
		name     string
		bind     string
		env      map[string]string
		code     int
		category string
	}{
		{"address in use", held.Addr().String(), nil, -32603, "address_in_use"},
		{"not host:port", "localhost", nil, -32602, "invalid_request"},
		{"port out of range", "127.0.0.1:70000", nil, -32602, "invalid_request"},
		{"port not a number", "127.0.0.1:http", nil, -32602, "invalid_request"},
		{"non-loopback without a token", "0.0.0.0:0", nil, -32602, "invalid_request"},
		{"address not on this host", "192.0.2.1:0", tokenEnv, -32603, "other"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := &gateway{t: t, socket: "/tmp/animus-test-none/control.sock", h: newHost(t, setup{env: c.env})}
			resp := g.startRaw(setup{bindAddr: c.bind})
			if resp.Error == nil || resp.Error.Code != c.code || resp.Error.Category() != c.category {
				t.Fatalf("bind %q: got %s, want code %d category %s", c.bind, resp.Raw, c.code, c.category)
			}
			// The plugin is still healthy enough to try again.
			if r := g.call("health/check", nil); r.Error != nil {
				t.Fatalf("health/check after a failed start: %s", r.Raw)
			}
		})
	}
}

// TransportConfig and config are validated before binding; every mistake is
// a clear -32602 and nothing is bound.
func TestStartValidation(t *testing.T) {
	cases := []struct {
		name   string
		params map[string]any
		env    map[string]string
		want   string
	}{
		{"no params", map[string]any{}, nil, "control_socket_path"},
		{"relative socket", map[string]any{"control_socket_path": "control.sock", "project_root": "/tmp"}, nil, "absolute"},
		{"relative root", map[string]any{"control_socket_path": "/tmp/x.sock", "project_root": "tmp"}, nil, "absolute"},
		{"socket path too long", map[string]any{"control_socket_path": "/" + strings.Repeat("s", 120), "project_root": "/tmp"}, nil, "longer"},
		{"unknown config key", withConfig(map[string]any{"allowed_origin": []string{"http://a"}}), nil, "allowed_origin"},
		{"literal token", withConfig(map[string]any{"auth_token": "abc"}), nil, "auth_token"},
		{"token env unset", withConfig(map[string]any{"auth_token_env": "NOT_SET_ANYWHERE"}), nil, "not set"},
		{"short token", withConfig(nil), map[string]string{"ANIMUS_HTTP_TOKEN": "tiny-tok9"}, "too short"},
		{"wildcard origin", withConfig(map[string]any{"cors": map[string]any{"allowed_origins": []string{"*"}}}), nil, "exact origins"},
		{"origin with path", withConfig(map[string]any{"cors": map[string]any{"allowed_origins": []string{"http://a.test/x"}}}), nil, "no path"},
		{"tokens entry without user", withConfig(map[string]any{"tokens": map[string]any{"ANIMUS_HTTP_TOKEN": map[string]any{}}}),
			map[string]string{"ANIMUS_HTTP_TOKEN": testToken}, "user_id"},
		{"limit out of range", withConfig(map[string]any{"max_body_bytes": 0}), nil, "max_body_bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t, setup{env: c.env})
			g := &gateway{t: t, h: h}
			resp := g.call("transport/start", c.params)
			if resp.Error == nil || resp.Error.Code != -32602 || !strings.Contains(resp.Error.Message, c.want) {
				t.Fatalf("got %s, want -32602 mentioning %q", resp.Raw, c.want)
			}
			if r := g.call("health/check", nil); r.Error != nil || !strings.Contains(string(r.Result), `"degraded"`) {
				t.Fatalf("health after a refused start: %s, want degraded", r.Raw)
			}
		})
	}
}

func withConfig(cfg map[string]any) map[string]any {
	p := map[string]any{"control_socket_path": "/tmp/animus-none/control.sock", "project_root": "/tmp", "bind_addr": "127.0.0.1:0"}
	if cfg != nil {
		p["config"] = cfg
	}
	return p
}

// A second start while serving is refused and the first listener keeps
// serving; after shutdown a new start works.
func TestSecondStartIsAnError(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	resp := g.startRaw(setup{})
	if resp.Error == nil || resp.Error.Code != -32602 || !strings.Contains(resp.Error.Message, "already started") {
		t.Fatalf("second start: %s, want -32602 already started", resp.Raw)
	}
	wantOK(t, "first listener after a refused second start", g.get("/api/v1/daemon/status"), nil)
	if r := g.call("transport/shutdown", nil); r.Error != nil {
		t.Fatalf("shutdown: %s", r.Raw)
	}
	again := g.startRaw(setup{})
	if again.Error != nil {
		t.Fatalf("start after shutdown: %s", again.Raw)
	}
}

// health/check: degraded before start, healthy while serving, degraded
// again once shut down.
func TestHealthFollowsTheListener(t *testing.T) {
	h := newHost(t, setup{})
	g := &gateway{t: t, h: h, socket: "/tmp/animus-none/control.sock"}
	status := func() string {
		r := g.call("health/check", nil)
		var res struct {
			Status string `json:"status"`
		}
		if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
			t.Fatalf("health/check: %s", r.Raw)
		}
		return res.Status
	}
	if s := status(); s != "degraded" {
		t.Errorf("before start: %s, want degraded", s)
	}
	if r := g.startRaw(setup{}); r.Error != nil {
		t.Fatalf("start: %s", r.Raw)
	}
	if s := status(); s != "healthy" {
		t.Errorf("serving: %s, want healthy", s)
	}
	if r := g.call("transport/shutdown", nil); r.Error != nil {
		t.Fatalf("shutdown: %s", r.Raw)
	}
	if s := status(); s != "degraded" {
		t.Errorf("after shutdown: %s, want degraded", s)
	}
}

// transport/shutdown drains: a slow request in flight finishes with its
// answer, an open SSE stream gets event: end, the port is free the moment
// the reply arrives, and a second shutdown is a no-op.
func TestShutdownDrains(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	g.d.SetDelay("workflow/get", 800*time.Millisecond)
	stream := g.openSSE("/api/v1/daemon/events", nil)

	slow := make(chan reply, 1)
	go func() { slow <- g.get("/api/v1/workflows/wf-1") }()
	if _, _, err := g.d.WaitRequest(e2etest.Ctx(t, 5*time.Second), "workflow/get", 0); err != nil {
		t.Fatal(err)
	}
	shutdownStarted := time.Now()
	resp := g.call("transport/shutdown", nil)
	replied := time.Now()
	if resp.Error != nil {
		t.Fatalf("transport/shutdown: %s", resp.Raw)
	}
	if !strings.Contains(string(resp.Result), `"drained":true`) {
		t.Errorf("shutdown result %s, want drained:true", resp.Result)
	}
	ln, err := net.Listen("tcp", g.addr)
	if err != nil {
		t.Fatalf("%s still bound after transport/shutdown answered: %v", g.addr, err)
	}
	ln.Close()

	select {
	case r := <-slow:
		wantOK(t, "the slow request in flight during shutdown", r, nil)
	default:
		t.Fatal("transport/shutdown answered before the in-flight request finished")
	}
	if replied.Sub(shutdownStarted) > 5*time.Second {
		t.Errorf("shutdown took %v", replied.Sub(shutdownStarted))
	}
	ev, _ := stream.next(t, 2*time.Second)
	if ev.Event != "end" || !strings.Contains(ev.Data, "shutting down") {
		t.Fatalf("SSE at shutdown: %+v, want event end", ev)
	}
	stream.waitEOF(t, 2*time.Second)

	if r := g.call("transport/shutdown", nil); r.Error != nil {
		t.Fatalf("second transport/shutdown: %s", r.Raw)
	}
	if _, err := http.Get(g.base + "/healthz"); err == nil {
		t.Fatal("the listener still answers after shutdown")
	}
}
