package conformance

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// HarnessSlow is the opt-in capability string for scenarios that need a
// slow request: the plugin serves harness/slow {ms} and honours
// $/cancelRequest on it.
const HarnessSlow = "$harness/slow"

// HarnessEnv is what the busy scenarios set to ask a pluginkit binary for
// harness/slow (pluginkit.HarnessEnv; the daemon never forwards it). Other
// plugins opt in by advertising HarnessSlow on their own.
const HarnessEnv = "ANIMUS_PLUGIN_HARNESS"

func busyScenarios() []Scenario {
	return []Scenario{
		{"generic", "ping-while-busy", scenarioPingWhileBusy},
		{"generic", "cancel-request", scenarioCancel},
		{"generic", "shutdown-drains-in-flight", scenarioDrain},
	}
}

// readySlow is ready for the scenarios that need harness/slow. It spawns
// with HarnessEnv set and reads that process's own capabilities: a plugin
// that does not opt in is skipped, saying why.
func readySlow(ctx context.Context, s *Session) (*fakehost.Host, Outcome, bool) {
	h, res, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}, func(c *fakehost.Config) {
		extra := map[string]string{HarnessEnv: "slow"}
		for k, v := range c.Extra {
			extra[k] = v
		}
		c.Extra = extra
	})
	if err != nil {
		return nil, failf("%v", err), false
	}
	if !slices.Contains(res.Capabilities.Methods, HarnessSlow) || !slices.Contains(res.Capabilities.Methods, "harness/slow") {
		return nil, skipf("the plugin does not opt in with %s (nor serves it under %s=slow)", HarnessSlow, HarnessEnv), false
	}
	return h, Outcome{}, true
}

// startSlow sends harness/slow with the given id without waiting.
func startSlow(ctx context.Context, h *fakehost.Host, id string, ms int) <-chan *fakehost.Response {
	done := make(chan *fakehost.Response, 1)
	go func() {
		resp, _ := h.Request(ctx, json.RawMessage(id), "harness/slow", map[string]int{"ms": ms})
		done <- resp
	}()
	return done
}

// scenarioPingWhileBusy: $/ping and health/check are answered at once while
// a slow request runs.
func scenarioPingWhileBusy(ctx context.Context, s *Session) Outcome {
	h, out, ok := readySlow(ctx, s)
	if !ok {
		return out
	}
	slow := startSlow(ctx, h, "5001", 1500)
	time.Sleep(50 * time.Millisecond)
	for _, m := range []string{"$/ping", "health/check"} {
		start := time.Now()
		if _, err := call(ctx, h, time.Second, m, nil); err != nil {
			return failf("%s while busy: %v", m, err)
		}
		if d := time.Since(start); d > 300*time.Millisecond {
			return failf("%s waited %v behind a slow request", m, d)
		}
	}
	if resp := <-slow; resp == nil || resp.Error != nil {
		return failf("the slow request failed: %v", resp)
	}
	return pass()
}

// scenarioCancel: $/cancelRequest makes the request answer -32002 promptly.
func scenarioCancel(ctx context.Context, s *Session) Outcome {
	h, out, ok := readySlow(ctx, s)
	if !ok {
		return out
	}
	slow := startSlow(ctx, h, "5002", 20000)
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if err := h.Notify("$/cancelRequest", map[string]int{"id": 5002}); err != nil {
		return failf("%v", err)
	}
	select {
	case resp := <-slow:
		if resp == nil {
			return failf("no response to the cancelled request")
		}
		if err := wantError(resp, -32002, ""); err != nil {
			return failf("cancelled request: %v", err)
		}
	case <-time.After(2 * time.Second):
		return failf("cancelled request still running 2 s after $/cancelRequest")
	}
	if d := time.Since(start); d > time.Second {
		return failf("cancellation took %v", d)
	}
	return pass()
}

// scenarioDrain: shutdown lets an in-flight request finish and answers
// after it; the plugin then exits by itself.
func scenarioDrain(ctx context.Context, s *Session) Outcome {
	h, out, ok := readySlow(ctx, s)
	if !ok {
		return out
	}
	slow := startSlow(ctx, h, "5003", 400)
	time.Sleep(50 * time.Millisecond)
	rep, err := h.Shutdown(ctx, fakehost.LadderDaemon)
	if err != nil {
		return failf("%v", err)
	}
	resp := <-slow
	switch {
	case resp == nil:
		return failf("in-flight request was never answered")
	case resp.Error != nil:
		return failf("in-flight request failed during shutdown: %s", resp.Error.Message)
	case rep.ShutdownReply == nil:
		return failf("shutdown not answered")
	case rep.ShutdownReply.At.Before(resp.At):
		return failf("shutdown answered before the in-flight request finished")
	case !rep.ExitedByItself || rep.ExitCode != 0:
		return failf("after the drain: exited by itself %v, code %d", rep.ExitedByItself, rep.ExitCode)
	}
	return pass()
}
