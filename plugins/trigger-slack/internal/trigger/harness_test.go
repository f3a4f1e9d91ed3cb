package trigger

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/config"
)

// waitLimit bounds each wait for a reply, a notification or a log line.
const waitLimit = 10 * time.Second

// host runs the service in process with pluginkittest, as main.go wires
// it: handlers, wire encoding, the Slack client and the real SQLite
// seen-set, without building the binary (e2e/triggerslack does). The kit
// logs the plugin at debug level and prints that log and the wire log when
// a test fails.
//
// The tests read the plugin's frames strictly in order: pos is the first
// frame not yet consumed by call or next.
type host struct {
	t   *testing.T
	svc *Service
	kit *pluginkittest.Host
	pos int
}

// startHost serves a Service configured by env and completes the
// handshake, binding the project to root. Start's cleanup stops the
// plugin and fails the test if it does not stop or wrote a line that is
// not JSON.
func startHost(t *testing.T, env map[string]string, root string) *host {
	t.Helper()
	svc := New(config.Load(func(k string) string { return env[k] }))
	mux := pluginkit.NewMux()
	svc.Register(mux)
	h := &host{t: t, svc: svc, kit: pluginkittest.Start(t, pluginkit.Plugin{
		Name: "animus-trigger-slack", Kind: "trigger_backend", Env: config.Env, Mux: mux, Streaming: true,
		Init: svc.Init, Health: svc.Health, Close: svc.Close,
	})}
	// Not the daemon's handshake, which claims progress support too: the
	// tests keep the one they were written against.
	if _, err := h.kit.Handshake(pluginkittest.Handshake{
		ProtocolVersion: "1.1.0",
		HostVersion:     "test",
		Capabilities:    &pluginkit.HostCapabilities{Streaming: true, Cancellation: true},
		InitExtensions:  map[string]any{"project_binding": map[string]string{"project_root": root}},
	}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	// The reply to initialize must be the first frame.
	if frames, _ := h.kit.Frames(0); frames[0].Method != "" {
		t.Fatalf("unexpected frame ahead of the initialize reply: %s", frames[0].Raw)
	}
	h.pos = 1
	return h
}

// stop closes stdin, as the daemon does, and waits for the plugin to
// drain and close its store, for the tests that check what it left.
func (h *host) stop() {
	if !h.kit.Close() {
		h.t.Error("plugin did not stop")
	}
}

func (h *host) notify(method string, params any) {
	h.t.Helper()
	if err := h.kit.Notify(method, params); err != nil {
		h.t.Fatal(err)
	}
}

// call sends one request and returns its result or error. A frame ahead
// of the reply fails the test: callers wait for notifications with next.
func (h *host) call(method string, params any) (json.RawMessage, *pluginkittest.RPCError) {
	h.t.Helper()
	id, err := h.kit.Request(method, params)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	f, at, err := h.kit.AwaitAt(ctx, id)
	if err != nil {
		h.t.Fatalf("reply to %s: %v", method, err)
	}
	if at != h.pos {
		frames, _ := h.kit.Frames(h.pos)
		h.t.Fatalf("unexpected frame while waiting for %s: %s", method, frames[0].Raw)
	}
	h.pos = at + 1
	return f.Result, f.Error
}

// next returns the next frame, which must be a notification.
func (h *host) next(what string) pluginkittest.Frame {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	f, after, err := h.kit.WaitFrame(ctx, h.pos, func(pluginkittest.Frame) bool { return true })
	if err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
	if !f.IsNotification() {
		h.t.Fatalf("got %s, want %s", f.Raw, what)
	}
	h.pos = after
	return f
}

// waitLog waits until the plugin's log holds a line containing every
// fragment, and returns that line.
func (h *host) waitLog(fragments ...string) string {
	h.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(h.kit.PluginLog(), "\n") {
			if containsAll(line, fragments) {
				return line
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("no log line with %q; logs:\n%s", fragments, h.kit.PluginLog())
	return ""
}

func containsAll(s string, fragments []string) bool {
	for _, f := range fragments {
		if !strings.Contains(s, f) {
			return false
		}
	}
	return true
}
