package fakehost

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// emit asks the miniplugin to write raw to stdout verbatim. With an explicit
// id and noreply the raw bytes are the only answer to the request, which is
// how a test gets a malformed response to a request the host did send.
func emit(ctx context.Context, h *Host, id, raw string, noreply bool) (*Response, error) {
	params := map[string]any{"raw": raw, "noreply": noreply}
	if id == "" {
		return h.Call(ctx, "mini/emit", params)
	}
	return h.Request(ctx, json.RawMessage(id), "mini/emit", params)
}

func TestViolationsDetected(t *testing.T) {
	schemas, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	daemon := Handshake{Preset: PresetDaemon}
	initThen := func(f func(ctx context.Context, h *Host) error) func(context.Context, *Host) error {
		return func(ctx context.Context, h *Host) error {
			if _, err := h.Initialize(ctx, daemon); err != nil {
				return err
			}
			return f(ctx, h)
		}
	}
	ping := initThen(func(ctx context.Context, h *Host) error { _, err := h.Call(ctx, "$/ping", nil); return err })
	cases := []struct {
		name     string
		mode     string
		lineMode bool
		schemas  bool
		action   func(context.Context, *Host) error
		wantErr  bool
		want     string
	}{
		{name: "log text on stdout", mode: "print-garbage-on-stdout", action: ping, want: `non-JSON bytes on stdout: "miniplugin starting up"`},
		{name: "reply to a notification", mode: "answers-notification", action: ping, want: "response without an id"},
		{name: "id:null before the initialize reply", mode: "id-null-before-init", action: ping, want: "id-bearing frame (id null) before the initialize reply"},
		{name: "response to an id never sent", mode: "good", action: initThen(func(ctx context.Context, h *Host) error {
			_, err := emit(ctx, h, "", `{"jsonrpc":"2.0","id":999,"result":{}}`+"\n", false)
			return err
		}), want: "response id 999 matches no request sent"},
		{name: "second response for one id", mode: "good", action: initThen(func(ctx context.Context, h *Host) error {
			_, err := emit(ctx, h, "80", `{"jsonrpc":"2.0","id":80,"result":{}}`+"\n", false)
			if err == nil { // the plugin's own reply follows the emitted one
				_, err = h.Call(ctx, "$/ping", nil)
			}
			return err
		}), want: "second response for id 80"},
		{name: "response without jsonrpc", mode: "good", action: initThen(func(ctx context.Context, h *Host) error {
			_, err := emit(ctx, h, "77", `{"id":77,"result":{}}`+"\n", true)
			return err
		}), want: `frame lacks "jsonrpc":"2.0"`},
		{name: "both result and error", mode: "good", action: initThen(func(ctx context.Context, h *Host) error {
			_, err := emit(ctx, h, "78", `{"jsonrpc":"2.0","id":78,"result":{},"error":{"code":-32603,"message":"x"}}`+"\n", true)
			return err
		}), want: "response id 78 has both result and error"},
		{name: "neither result nor error", mode: "good", action: initThen(func(ctx context.Context, h *Host) error {
			_, err := emit(ctx, h, "79", `{"jsonrpc":"2.0","id":79}`+"\n", true)
			return err
		}), want: "response id 79 has neither result nor error"},
		{name: "plugin→host request", mode: "good", action: initThen(func(ctx context.Context, h *Host) error {
			_, err := emit(ctx, h, "", `{"jsonrpc":"2.0","id":5000,"method":"host/thing"}`+"\n", false)
			return err
		}), want: "plugin sent a request"},
		{name: "result fails its schema", mode: "bad-health", schemas: true, action: initThen(func(ctx context.Context, h *Host) error {
			_, err := h.Call(ctx, "health/check", nil)
			return err
		}), want: "result of health/check: schemacheck: animus-plugin-protocol/HealthCheckResult"},
		{name: "frame fails the envelope schema", mode: "good", schemas: true, action: initThen(func(ctx context.Context, h *Host) error {
			_, err := emit(ctx, h, "", `{"jsonrpc":"2.0","id":81,"error":{"code":"x","message":1}}`+"\n", false)
			return err
		}), want: "frame schema: schemacheck: animus-plugin-protocol/RpcResponse"},
		{name: "pretty-printed frames under the line-by-line host", mode: "pretty-print", lineMode: true, wantErr: true,
			action: func(ctx context.Context, h *Host) error {
				_, err := h.Initialize(ctx, Handshake{Preset: PresetDaemon, Timeout: time.Second})
				return err
			}, want: `non-JSON bytes on stdout: "\"jsonrpc\": \"2.0\","`},
		{name: "8 MiB without a complete frame", mode: "good", wantErr: true, action: initThen(func(ctx context.Context, h *Host) error {
			_, err := h.Call(ctx, "mini/unterminated", map[string]int{"bytes": MaxPendingFrame + 1024})
			if !errors.Is(err, ErrConnectionLost) {
				return errors.New("want connection lost, got " + errString(err))
			}
			return err
		}), want: "more than 8 MiB buffered without a complete frame"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := miniConfig(c.mode)
			cfg.LineMode = c.lineMode
			if c.schemas {
				cfg.Schemas = schemas
			}
			h := startRaw(t, cfg)
			err := c.action(testCtx(t), h)
			if (err != nil) != c.wantErr {
				t.Fatalf("action err = %v, wantErr %v", err, c.wantErr)
			}
			vio := h.Violations()
			found := false
			for _, v := range vio {
				found = found || strings.Contains(v, c.want)
			}
			if !found {
				t.Errorf("violations %q lack %q", vio, c.want)
			}
			if !strings.Contains(h.WireLog(), " !! ") {
				t.Error("violation not marked in the wire log")
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// A well-behaved session under every check produces no violation, including
// pretty-printed frames, which the current daemon reader accepts.
func TestCleanSessions(t *testing.T) {
	schemas, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"good", "pretty-print"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cfg := miniConfig(mode)
			cfg.Schemas = schemas
			h := New(t, cfg) // New fails the test on any violation
			ctx := testCtx(t)
			res := mustInit(t, h, Handshake{Preset: PresetQueueClient})
			if res.Capabilities.Methods[0] != "health/check" {
				t.Errorf("capabilities = %+v", res.Capabilities)
			}
			resp, err := h.Call(ctx, "health/check", nil)
			if err != nil || string(resp.Result) == "" || resp.Error != nil {
				t.Fatalf("health/check: %+v %v", resp, err)
			}
			if _, err := h.Call(ctx, "mini/notify", nil); err != nil {
				t.Fatal(err)
			}
			n, err := h.WaitNotification(ctx, func(n Notification) bool { return n.Method == "log/entry" })
			if err != nil || !strings.Contains(string(n.Params), "hello") {
				t.Fatalf("notification %+v, %v", n, err)
			}
			if rep, err := h.Shutdown(ctx, LadderDaemon); err != nil || !rep.ExitedByItself {
				t.Fatalf("shutdown %+v %v", rep, err)
			}
			h.ExpectNoViolations(t)
		})
	}
}
