package pluginkittest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

type echo struct {
	Message string `json:"message"`
}

func testPlugin() pluginkit.Plugin {
	mux := pluginkit.NewMux()
	pluginkit.Handle(mux, "t/echo", func(ctx context.Context, p echo) (echo, error) {
		_ = pluginkit.PeerFrom(ctx).Notify("t/echoed", p)
		return p, nil
	})
	pluginkit.Handle(mux, "t/missing", func(ctx context.Context, p echo) (echo, error) {
		return echo{}, pluginkit.NotFound("%s", p.Message)
	})
	return pluginkit.Plugin{Name: "animus-t", Kind: "custom", Mux: mux}
}

func TestHostCallsAndNotifications(t *testing.T) {
	h := Start(t, testPlugin())
	if _, err := h.Call("t/echo", echo{"early"}); !isCode(err, pluginkit.CodeNotInitialized) {
		t.Fatalf("before initialize: %v, want -32000", err)
	}
	res, err := h.Initialize(map[string]any{"project_binding": map[string]any{"project_root": "/p"}})
	if err != nil || !json.Valid(res) {
		t.Fatalf("Initialize = %s, %v", res, err)
	}
	tests := []struct {
		name, method string
		params       any
		want         string
		code         int
	}{
		{"struct params", "t/echo", echo{"a"}, `{"message":"a"}`, 0},
		{"raw params", "t/echo", `{"message":"<b>"}`, `{"message":"<b>"}`, 0},
		{"error reply", "t/missing", echo{"x"}, "", pluginkit.CodeInvalidParams},
		{"unknown method", "t/nope", nil, "", pluginkit.CodeMethodNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.Call(tt.method, tt.params)
			if tt.code != 0 {
				if !isCode(err, tt.code) {
					t.Fatalf("err = %v, want code %d", err, tt.code)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("Call = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, next, err := h.WaitNotification(ctx, 0, func(f Frame) bool { return f.Method == "t/echoed" })
	if err != nil || string(n.Params) != `{"message":"a"}` {
		t.Fatalf("first t/echoed = %s, %v", n.Raw, err)
	}
	if n, _, err = h.WaitNotification(ctx, next, func(f Frame) bool { return f.Method == "t/echoed" }); err != nil || string(n.Params) != `{"message":"<b>"}` {
		t.Fatalf("second t/echoed = %s, %v", n.Raw, err)
	}
	if _, err := h.Call("shutdown", nil); err != nil {
		t.Fatal(err)
	}
	if err := h.Notify("exit", nil); err != nil {
		t.Fatal(err)
	}
	if exited, code := h.Wait(2 * time.Second); !exited || code != 0 {
		t.Fatalf("after exit: exited %v, code %d", exited, code)
	}
	if frames, _ := h.Frames(0); len(frames) < 7 {
		t.Fatalf("only %d frames recorded", len(frames))
	}
}

func isCode(err error, code int) bool {
	var e *RPCError
	return errors.As(err, &e) && e.Code == code && e.Category() != ""
}

// Raw params reach the plugin byte for byte, under the caller's id, and
// the handshake can be the old daemon's.
func TestHostRawFramesAndHandshake(t *testing.T) {
	h := Start(t, testPlugin())
	caps := pluginkit.HostCapabilities{Cancellation: true}
	if _, err := h.Handshake(Handshake{ProtocolVersion: "1.0.0", HostVersion: "0.5.0", Capabilities: &caps}); err != nil {
		t.Fatal(err)
	}
	raw := `{ "message" : "<a & b>" }`
	if err := h.RequestID(json.RawMessage(`"mine"`), "t/echo", raw); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, at, err := h.AwaitAt(ctx, json.RawMessage(`"mine"`))
	if err != nil || string(f.Result) != `{"message":"<a & b>"}` {
		t.Fatalf("reply %s, %v", f.Raw, err)
	}
	sent := `"id":"mine","method":"t/echo","params":` + raw + `}`
	if !strings.Contains(h.Log(), sent) {
		t.Fatalf("the wire log lacks the frame as given (%s):\n%s", sent, h.Log())
	}
	if _, err := h.Request("t/echo", ""); err != nil { // "" sends no params at all
		t.Fatal(err)
	}
	if !strings.Contains(h.Log(), `"method":"t/echo"}`) {
		t.Fatalf("empty params were sent:\n%s", h.Log())
	}
	// The notification the echo caused comes right after its reply.
	n, _, err := h.WaitFrame(ctx, at+1, func(Frame) bool { return true })
	if err != nil || !n.IsNotification() || n.Method != "t/echoed" {
		t.Fatalf("frame after the reply: %s, %v", n.Raw, err)
	}
	if id := h.NextID(); string(id) == `"mine"` || len(id) == 0 {
		t.Fatalf("NextID = %s", id)
	}
	if !strings.Contains(h.PluginLog(), `"msg":"initialized"`) {
		t.Fatalf("plugin log lacks the initialize debug line:\n%s", h.PluginLog())
	}
}

func TestOKAndFails(t *testing.T) {
	h := Start(t, testPlugin())
	if _, err := h.Handshake(Handshake{HostName: "animus-agent-runner", InitExtensions: map[string]any(nil)}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.Log(), "init_extensions") {
		t.Fatalf("a nil map sent init_extensions:\n%s", h.Log())
	}
	var got echo
	if raw := h.OK(t, "t/echo", echo{"x"}, &got); got.Message != "x" || string(raw) != `{"message":"x"}` {
		t.Fatalf("OK = %s, %+v", raw, got)
	}
	e := h.Fails(t, "t/missing", echo{"TASK-1"}, pluginkit.CodeInvalidParams, pluginkit.CategoryNotFound)
	if e.Message != "not found: TASK-1" || e.Field() != "" {
		t.Fatalf("Fails = %v", e)
	}
}
