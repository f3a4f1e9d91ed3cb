package pluginkit

import (
	"context"
	"testing"
	"time"
)

// TestHarnessSlowOptIn: harness/slow exists only when HarnessEnv asks for
// it, is advertised with its opt-in string, and behaves like a slow domain
// call (answers, cancels, validates).
func TestHarnessSlowOptIn(t *testing.T) {
	cases := []struct {
		name       string
		env        string
		advertised bool
		params     any
		wantCode   int // 0: success
	}{
		{"unset is not served", "", false, map[string]int{"ms": 1}, -32601},
		{"other value is not served", "1", false, map[string]int{"ms": 1}, -32601},
		{"slow answers after sleeping", "slow", true, map[string]int{"ms": 30}, 0},
		{"negative ms is invalid", "slow", true, map[string]int{"ms": -1}, -32602},
		{"over the limit is invalid", "slow", true, map[string]int{"ms": 60_001}, -32602},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := testPlugin()
			p.enableHarness(c.env)
			h := startHost(t, p)
			caps := h.initialize()["result"].(map[string]any)["capabilities"].(map[string]any)["methods"].([]any)
			if got := contains(caps, harnessSlowCapability) && contains(caps, harnessSlowMethod); got != c.advertised {
				t.Fatalf("advertised = %v, want %v (methods %v)", got, c.advertised, caps)
			}
			start := time.Now()
			resp := h.call(harnessSlowMethod, c.params)
			if c.wantCode == 0 {
				if got := result(t, resp)["slept_ms"]; got != float64(30) || time.Since(start) < 30*time.Millisecond {
					t.Fatalf("slept_ms = %v after %v", got, time.Since(start))
				}
				return
			}
			if code, _, _ := errCode(t, resp); code != c.wantCode {
				t.Fatalf("code = %d, want %d: %v", code, c.wantCode, resp)
			}
		})
	}
}

// TestHarnessSlowCancelled: $/cancelRequest ends harness/slow with -32002.
func TestHarnessSlowCancelled(t *testing.T) {
	p := testPlugin()
	p.enableHarness("slow")
	h := startHost(t, p)
	h.initialize()
	id := h.sendRequest(harnessSlowMethod, map[string]int{"ms": 20_000})
	time.Sleep(20 * time.Millisecond)
	h.notify("$/cancelRequest", map[string]int{"id": id})
	if code, _, _ := errCode(t, h.await(id)); code != -32002 {
		t.Fatalf("code = %d, want -32002", code)
	}
}

// TestHarnessSlowKeepsPluginsOwn: a plugin that serves harness/slow itself
// keeps its handler and is advertised once.
func TestHarnessSlowKeepsPluginsOwn(t *testing.T) {
	p := testPlugin()
	Handle(p.Mux, harnessSlowMethod, func(ctx context.Context, _ harnessSlowParams) (string, error) { return "own", nil })
	p.ExtraCapabilities = []string{harnessSlowCapability}
	p.enableHarness("slow")
	h := startHost(t, p)
	caps := h.initialize()["result"].(map[string]any)["capabilities"].(map[string]any)["methods"].([]any)
	n := 0
	for _, m := range caps {
		if m == harnessSlowCapability {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%s listed %d times: %v", harnessSlowCapability, n, caps)
	}
	if got := h.call(harnessSlowMethod, nil)["result"]; got != "own" {
		t.Fatalf("result = %v, want the plugin's own handler", got)
	}
}
