package pluginkit

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestInitializeResult(t *testing.T) {
	h := startHost(t, testPlugin())
	res := result(t, h.initialize())
	if res["protocol_version"] != ProtocolVersion {
		t.Errorf("protocol_version = %v", res["protocol_version"])
	}
	info := res["plugin_info"].(map[string]any)
	if info["name"] != "animus-test" || info["plugin_kind"] != "trigger_backend" || info["description"] == nil {
		t.Errorf("plugin_info = %v", info)
	}
	caps := res["capabilities"].(map[string]any)
	methods := caps["methods"].([]any)
	for _, want := range []string{"test/echo", "test/sleep", "health/check", "$vendor/test"} {
		if !contains(methods, want) {
			t.Errorf("methods %v lack %s", methods, want)
		}
	}
	seen := map[any]int{}
	for _, m := range methods {
		seen[m]++
		if seen[m] > 1 {
			t.Errorf("method %v listed twice", m)
		}
	}
	if contains(methods, "test/note") {
		t.Errorf("a notification-only handler must not be advertised as a method")
	}
	if caps["cancellation"] != true || caps["streaming"] != true || caps["progress"] != true {
		t.Errorf("capabilities = %v", caps)
	}
}

func TestHandshakeErrors(t *testing.T) {
	tests := []struct {
		name     string
		params   any
		code     int
		category string
		contains []string
	}{
		{"major 2", map[string]any{"protocol_version": "2.0.0", "host_info": map[string]any{"name": "x", "version": "1"}, "capabilities": map[string]any{}},
			CodeInvalidRequest, "protocol", []string{"2.0.0", ProtocolVersion}},
		{"garbage version", map[string]any{"protocol_version": "banana", "host_info": map[string]any{"name": "x", "version": "1"}, "capabilities": map[string]any{}},
			CodeInvalidRequest, "protocol", []string{"banana"}},
		{"missing version", map[string]any{"host_info": map[string]any{"name": "x", "version": "1"}, "capabilities": map[string]any{}},
			CodeInvalidParams, "invalid_request", []string{"protocol_version"}},
		{"wrong type", map[string]any{"protocol_version": 1},
			CodeInvalidParams, "invalid_request", []string{"protocol_version", "string"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startHost(t, testPlugin())
			code, msg, cat := errCode(t, h.call("initialize", tc.params))
			if code != tc.code || cat != tc.category {
				t.Errorf("got %d/%s %q, want %d/%s", code, cat, msg, tc.code, tc.category)
			}
			for _, s := range tc.contains {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not name %q", msg, s)
				}
			}
			// The plugin stays usable: a correct initialize still works.
			h.initialize()
		})
	}
}

func TestLifecycleGating(t *testing.T) {
	h := startHost(t, testPlugin())
	code, _, cat := errCode(t, h.call("test/echo", map[string]any{"message": "early"}))
	if code != CodeNotInitialized || cat != "not_initialized" {
		t.Fatalf("domain call before initialize: got %d/%s", code, cat)
	}
	// $/ping and health/check work at any time.
	if r := h.call("$/ping", nil); r["error"] != nil {
		t.Fatalf("$/ping before initialize: %v", r)
	}
	h.initialize()
	code, msg, _ := errCode(t, h.call("initialize", map[string]any{"protocol_version": "1.1.0"}))
	if code != CodeInvalidRequest || !strings.Contains(msg, "twice") {
		t.Fatalf("second initialize: %d %q", code, msg)
	}
	// initialized with params {} is accepted silently, like the testkit's.
	h.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}` + "\n")
	h.expectSilence(50 * time.Millisecond)
	if r := result(t, h.call("test/echo", map[string]any{"message": "hi"})); r["message"] != "hi" {
		t.Fatalf("echo = %v", r)
	}
}

func TestInitExtensionsReachInit(t *testing.T) {
	var got atomic.Value
	p := testPlugin()
	p.Init = func(ctx context.Context, peer *Peer, params InitializeParams) error {
		b, err := params.Binding()
		if err != nil {
			return InvalidParams("no binding: %v", err)
		}
		var mcp struct{ Command string }
		_ = json.Unmarshal(params.InitExtensions["memory_mcp_stdio_command"], &mcp)
		got.Store(b.ProjectRoot + "|" + b.RepoScope + "|" + mcp.Command)
		return nil
	}
	h := startHost(t, p)
	r := h.call("initialize", json.RawMessage(`{"capabilities":{"cancellation":true,"progress":true,"streaming":true},"host_info":{"name":"animus","version":"0.6.33"},"init_extensions":{"memory_mcp_stdio_command":{"command":"/bin/animus"},"project_binding":{"project_root":"/abs/project","repo_scope":"project-3fa9c1"}},"protocol_version":"1.1.0"}`))
	result(t, r)
	if got.Load() != "/abs/project|project-3fa9c1|/bin/animus" {
		t.Fatalf("Init saw %v", got.Load())
	}
}

func TestInitErrorLeavesPluginUninitialized(t *testing.T) {
	p := testPlugin()
	calls := 0
	p.Init = func(ctx context.Context, peer *Peer, params InitializeParams) error {
		calls++
		if calls == 1 {
			return Unavailable("database locked")
		}
		return nil
	}
	h := startHost(t, p)
	code, msg, cat := errCode(t, h.call("initialize", map[string]any{"protocol_version": "1.1.0"}))
	if code != CodeInternalError || cat != "unavailable" || msg != "backend unavailable: database locked" {
		t.Fatalf("got %d/%s %q", code, cat, msg)
	}
	if code, _, _ := errCode(t, h.call("test/echo", nil)); code != CodeNotInitialized {
		t.Fatalf("after failed init, domain call gave %d", code)
	}
	h.initialize()
}

func TestShutdownDrainsInFlight(t *testing.T) {
	closed := make(chan struct{})
	p := testPlugin()
	p.Close = func(ctx context.Context) error { close(closed); return nil }
	h := startHost(t, p)
	h.initialize()
	slow := h.sendRequest("test/sleep", map[string]any{"ms": 300})
	time.Sleep(20 * time.Millisecond)
	shut := h.sendRequest("shutdown", nil)
	// New requests are refused while draining.
	late := h.sendRequest("test/echo", map[string]any{"message": "late"})
	// $/ping is still answered during the drain.
	ping := h.sendRequest("$/ping", nil)

	order := []int{}
	byID := map[int]map[string]any{}
	for len(order) < 4 {
		f := h.next(3 * time.Second)
		if id, ok := f["id"].(float64); ok {
			order = append(order, int(id))
			byID[int(id)] = f
		}
	}
	if r := result(t, byID[slow]); r["slept_ms"] != float64(300) {
		t.Errorf("slow request result = %v", byID[slow])
	}
	if code, _, cat := errCode(t, byID[late]); code != CodeInvalidRequest || cat != "protocol" {
		t.Errorf("request after shutdown: %d/%s", code, cat)
	}
	if byID[ping]["error"] != nil {
		t.Errorf("ping during drain: %v", byID[ping])
	}
	if result(t, byID[shut]) == nil || len(result(t, byID[shut])) != 0 {
		t.Errorf("shutdown result = %v, want {}", byID[shut])
	}
	if pos(order, slow) > pos(order, shut) {
		t.Errorf("shutdown answered before the in-flight request finished: order %v", order)
	}
	select {
	case <-closed:
	default:
		t.Errorf("Close hook did not run before the shutdown reply")
	}
	// A second shutdown is answered too (idempotent).
	result(t, h.call("shutdown", nil))
	h.notify("exit", nil)
	if _, err := h.waitDone(time.Second); err != nil {
		t.Fatalf("Serve returned %v", err)
	}
}

func pos(list []int, v int) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}

func TestExitPaths(t *testing.T) {
	tests := []struct {
		name   string
		stream bool // a live notification stream is running when the host lets go
		stop   func(h *pipeHost)
	}{
		{"exit notification", false, func(h *pipeHost) { h.notify("exit", nil) }},
		{"stdin EOF", false, func(h *pipeHost) { h.in.Close() }},
		{"exit with a live stream", true, func(h *pipeHost) { h.notify("exit", nil) }},
		{"EOF with a live stream", true, func(h *pipeHost) { h.in.Close() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			closed := make(chan struct{})
			p := testPlugin()
			p.Close = func(ctx context.Context) error { close(closed); return nil }
			h := startHost(t, p)
			h.initialize()
			if tc.stream {
				result(t, h.call("test/stream", map[string]any{"count": 1 << 30}))
			}
			go func() { // keep reading so stream notifications never block the writer
				for range h.frames {
				}
			}()
			start := time.Now()
			tc.stop(h)
			if _, err := h.waitDone(2 * time.Second); err != nil {
				t.Fatalf("Serve returned %v", err)
			}
			if elapsed := time.Since(start); elapsed > 500*time.Millisecond {
				t.Errorf("took %v to exit, want < 500ms", elapsed)
			}
			select {
			case <-closed:
			default:
				t.Errorf("Close hook did not run")
			}
		})
	}
}

func TestSignalDrains(t *testing.T) {
	p := testPlugin()
	closed := make(chan struct{})
	p.Close = func(ctx context.Context) error { close(closed); return nil }
	inR, inW := PipeForTest()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, p, inR, discard{}) }()
	cancel() // what SIGTERM does in Main
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve returned %v", err)
		}
	case <-time.After(500 * time.Millisecond):
		t.Fatal("Serve did not return within 500ms of the signal")
	}
	<-closed
}
