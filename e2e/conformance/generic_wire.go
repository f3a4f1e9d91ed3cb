package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

func wireScenarios() []Scenario {
	return []Scenario{
		{"generic", "ping", scenarioPing},
		{"generic", "health-check", scenarioHealth},
		{"generic", "unknown-method", scenarioUnknownMethod},
		{"generic", "notifications-never-answered", scenarioNotifications},
		{"generic", "parse-error", scenarioBadFrame("{not json\n", -32700)},
		{"generic", "invalid-utf8", scenarioBadFrame("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"$/ping\",\"params\":{\"x\":\"\xc3\x28\"}}\n", -32700)},
		{"generic", "byte-order-mark", scenarioBadFrame("\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"$/ping\"}\n", -32700)},
		{"generic", "not-a-request", scenarioBadFrame("42\n", -32600)},
		{"generic", "invalid-request-keeps-id", scenarioInvalidRequestID},
		{"generic", "blank-lines", scenarioBlankLines},
		{"generic", "pretty-printed-frame", scenarioPretty},
		{"generic", "ids-echoed-verbatim", scenarioIDs},
		{"generic", "large-frame", scenarioLargeFrame},
		{"generic", "oversized-frame", scenarioOversized},
		{"generic", "line-mode-host", scenarioLineMode},
	}
}

func ready(ctx context.Context, s *Session) (*fakehost.Host, Outcome, bool) {
	h, _, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon})
	if err != nil {
		return nil, failf("%v", err), false
	}
	return h, Outcome{}, true
}

// stillServes checks the plugin answers $/ping after whatever came before.
func stillServes(ctx context.Context, h *fakehost.Host) error {
	resp, err := call(ctx, h, 2*time.Second, "$/ping", nil)
	if err != nil {
		return fmt.Errorf("plugin stopped answering: %w", err)
	}
	return wantResult(resp, nil)
}

// scenarioPing: $/ping without params answers {} within 1 s (spec §6.2).
func scenarioPing(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	start := time.Now()
	resp, err := call(ctx, h, time.Second, "$/ping", nil)
	if err != nil {
		return failf("%v", err)
	}
	var r map[string]any
	if err := wantResult(resp, &r); err != nil {
		return failf("%v", err)
	}
	if r == nil || len(r) != 0 {
		return failf("$/ping result %s, want {}", resp.Result)
	}
	if d := time.Since(start); d > time.Second {
		return failf("$/ping took %v", d)
	}
	return pass()
}

// scenarioHealth: health/check (no params, then {}) answers a valid
// status; a reported memory_usage_bytes is the real RSS.
func scenarioHealth(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	for _, params := range []any{nil, json.RawMessage(`{}`)} {
		resp, err := call(ctx, h, 2*time.Second, "health/check", params)
		if err != nil {
			return failf("%v", err)
		}
		var r struct {
			Status string  `json:"status"`
			Uptime *uint64 `json:"uptime_ms"`
			RSS    *uint64 `json:"memory_usage_bytes"`
		}
		if err := wantResult(resp, &r); err != nil {
			return failf("%v", err)
		}
		switch r.Status {
		case "healthy", "degraded", "unhealthy":
		default:
			return failf("status %q", r.Status)
		}
		if r.RSS != nil {
			real, err := vmRSS(h.Pid())
			if err == nil && (*r.RSS < real/2 || *r.RSS > real*2) {
				return failf("memory_usage_bytes %d is not the process RSS (%d per /proc)", *r.RSS, real)
			}
		}
	}
	return pass()
}

func vmRSS(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// scenarioUnknownMethod: an unknown method with an id is -32601.
func scenarioUnknownMethod(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	resp, err := call(ctx, h, 2*time.Second, "conformance/no-such-method", json.RawMessage(`{}`))
	if err != nil {
		return failf("%v", err)
	}
	if err := wantError(resp, -32601, ""); err != nil {
		return failf("%v", err)
	}
	return pass()
}

// scenarioNotifications: unknown notifications, $/ ones, initialized and a
// cancel for nothing are never answered (a reply would be a violation).
func scenarioNotifications(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	for _, n := range []struct {
		method string
		params any
	}{
		{"$/unknownNotification", json.RawMessage(`{"x":1}`)},
		{"$/setTrace", json.RawMessage(`{"value":"off"}`)},
		{"conformance/unknown-notification", nil},
		{"initialized", nil},
		{"$/cancelRequest", json.RawMessage(`{"id":987654}`)},
	} {
		if err := h.Notify(n.method, n.params); err != nil {
			return failf("notify %s: %v", n.method, err)
		}
	}
	if err := stillServes(ctx, h); err != nil {
		return failf("%v", err)
	}
	time.Sleep(50 * time.Millisecond) // a late reply to a notification would show up here
	return pass()
}

// scenarioBadFrame sends a frame that is not a usable request and expects
// an error with id null and the code, then carries on.
func scenarioBadFrame(frame string, code int) func(context.Context, *Session) Outcome {
	return func(ctx context.Context, s *Session) Outcome {
		h, out, ok := ready(ctx, s)
		if !ok {
			return out
		}
		h.Expect(json.RawMessage("null"), "(bad frame)")
		if err := h.Send([]byte(frame)); err != nil {
			return failf("send: %v", err)
		}
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		resp, err := h.Await(actx, json.RawMessage("null"))
		if err != nil {
			return failf("no error response with id null to %q: %v", clip([]byte(frame)), err)
		}
		if err := wantError(resp, code, ""); err != nil {
			return failf("%v", err)
		}
		if err := stillServes(ctx, h); err != nil {
			return failf("%v", err)
		}
		return pass()
	}
}

// scenarioInvalidRequestID: a JSON object that is not a valid request but
// has a usable id gets -32600 with that id.
func scenarioInvalidRequestID(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	for _, tc := range []struct{ id, frame string }{
		{"77", `{"jsonrpc":"1.0","id":77,"method":"$/ping"}`},
		{"78", `{"jsonrpc":"2.0","id":78,"method":12}`},
	} {
		h.Expect(json.RawMessage(tc.id), "(invalid request)")
		if err := h.Send([]byte(tc.frame + "\n")); err != nil {
			return failf("send: %v", err)
		}
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := h.Await(actx, json.RawMessage(tc.id))
		cancel()
		if err != nil {
			return failf("no response to %s: %v", tc.frame, err)
		}
		if err := wantError(resp, -32600, ""); err != nil {
			return failf("%s: %v", tc.frame, err)
		}
	}
	return pass()
}

// scenarioBlankLines: blank lines between frames are ignored.
func scenarioBlankLines(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	if err := h.Send([]byte("\n\n   \n\t\r\n")); err != nil {
		return failf("send: %v", err)
	}
	if err := stillServes(ctx, h); err != nil {
		return failf("%v", err)
	}
	return pass()
}

// scenarioPretty: a request pretty-printed over several lines is accepted
// (spec §1.1).
func scenarioPretty(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	h.Expect(json.RawMessage("4100"), "$/ping")
	frame := "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 4100,\n  \"method\": \"$/ping\",\n  \"params\": {\n    \"note\": \"a } in a string\"\n  }\n}\n"
	if err := h.Send([]byte(frame)); err != nil {
		return failf("send: %v", err)
	}
	actx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := h.Await(actx, json.RawMessage("4100"))
	if err != nil {
		return failf("pretty-printed request not answered: %v", err)
	}
	if err := wantResult(resp, nil); err != nil {
		return failf("%v", err)
	}
	return pass()
}

// scenarioIDs: string ids and numbers beyond int64 come back byte for byte.
func scenarioIDs(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	for _, id := range []string{`"req-α-1"`, `"42"`, `18446744073709551615`, `-3`} {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := h.Request(actx, json.RawMessage(id), "$/ping", nil)
		cancel()
		if err != nil {
			return failf("id %s: %v", id, err)
		}
		raw := resp.Raw
		if !bytes.Contains(raw, []byte(`"id":`+id)) {
			return failf("id %s not echoed verbatim: %s", id, raw)
		}
	}
	return pass()
}

// scenarioLargeFrame: a 15 MiB frame is accepted (the limit is 16 MiB).
func scenarioLargeFrame(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	pad := strings.Repeat("a", 15<<20)
	resp, err := call(ctx, h, 20*time.Second, "$/ping", map[string]string{"pad": pad})
	if err != nil {
		return failf("%v", err)
	}
	if err := wantResult(resp, nil); err != nil {
		return failf("%v", err)
	}
	return pass()
}

// scenarioOversized: a line over 16 MiB is rejected with -32700 and the
// next frame is served.
func scenarioOversized(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	h.Expect(json.RawMessage("null"), "(oversized frame)")
	frame := `{"jsonrpc":"2.0","id":31,"method":"$/ping","params":{"pad":"` + strings.Repeat("b", 17<<20) + `"}}` + "\n"
	if err := h.Send([]byte(frame)); err != nil {
		return failf("send: %v", err)
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := h.Await(actx, json.RawMessage("null"))
	if err != nil {
		return failf("no -32700 for a 17 MiB line: %v", err)
	}
	if err := wantError(resp, -32700, ""); err != nil {
		return failf("%v", err)
	}
	if err := stillServes(ctx, h); err != nil {
		return failf("%v", err)
	}
	return pass()
}

// scenarioLineMode: an older host reads stdout strictly line by line, so
// every frame must be one line.
func scenarioLineMode(ctx context.Context, s *Session) Outcome {
	h, _, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}, func(c *fakehost.Config) { c.LineMode = true })
	if err != nil {
		return failf("%v", err)
	}
	for _, m := range []string{"$/ping", "health/check", "conformance/no-such-method"} {
		if _, err := call(ctx, h, 2*time.Second, m, nil); err != nil {
			return failf("%v", err)
		}
	}
	return pass()
}
