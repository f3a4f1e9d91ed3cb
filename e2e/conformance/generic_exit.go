package conformance

import (
	"context"
	"encoding/json"
	"syscall"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// idleExitBudget is how fast an idle plugin must be gone once told to go.
// The testkit kills at 750 ms; we hold plugins to 500 ms.
const idleExitBudget = 500 * time.Millisecond

func exitScenarios() []Scenario {
	return []Scenario{
		{"generic", "shutdown-then-exit", scenarioShutdownExit},
		{"generic", "requests-after-shutdown", scenarioAfterShutdown},
		{"generic", "exit-without-shutdown", scenarioStop("exit notification", func(h *fakehost.Host) error { return h.Notify("exit", nil) })},
		{"generic", "stdin-eof", scenarioStop("stdin EOF", func(h *fakehost.Host) error { return h.CloseStdin() })},
		{"generic", "sigterm", scenarioStop("SIGTERM", func(h *fakehost.Host) error { return syscall.Kill(h.Pid(), syscall.SIGTERM) })},
		{"generic", "testkit-teardown", scenarioTestkitTeardown},
	}
}

// scenarioShutdownExit: the daemon's ladder ends with the plugin exiting 0
// by itself, shutdown answered {}.
func scenarioShutdownExit(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	rep, err := h.Shutdown(ctx, fakehost.LadderDaemon)
	if err != nil {
		return failf("%v", err)
	}
	if rep.ShutdownReply == nil {
		return failf("shutdown not answered within %v", fakehost.ShutdownReplyTimeout)
	}
	var r map[string]any
	if err := wantResult(rep.ShutdownReply, &r); err != nil || len(r) != 0 {
		return failf("shutdown reply %s, want {}", rep.ShutdownReply.Raw)
	}
	if !rep.ExitedByItself {
		return failf("the plugin ignored exit and was SIGKILLed after %v", rep.Elapsed)
	}
	if rep.ExitCode != 0 {
		return failf("exit code %d, want 0", rep.ExitCode)
	}
	return pass()
}

// scenarioAfterShutdown: once shutdown is answered, domain requests are
// refused while $/ping still works.
func scenarioAfterShutdown(ctx context.Context, s *Session) Outcome {
	method := s.DomainMethod()
	if method == "" {
		return skipf("the plugin advertises no domain method")
	}
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	resp, err := call(ctx, h, 3*time.Second, "shutdown", nil)
	if err != nil {
		return failf("%v", err)
	}
	if err := wantResult(resp, nil); err != nil {
		return failf("%v", err)
	}
	resp, err = call(ctx, h, 2*time.Second, method, json.RawMessage(`{}`))
	if err != nil {
		return failf("%v", err)
	}
	if resp.Error == nil {
		return failf("%s after shutdown succeeded: %s", method, clip(resp.Result))
	}
	if err := stillServes(ctx, h); err != nil {
		return failf("after shutdown: %v", err)
	}
	return pass()
}

// scenarioStop: an idle plugin told to go in the given way exits 0 within
// idleExitBudget.
func scenarioStop(what string, stop func(*fakehost.Host) error) func(context.Context, *Session) Outcome {
	return func(ctx context.Context, s *Session) Outcome {
		h, out, ok := ready(ctx, s)
		if !ok {
			return out
		}
		start := time.Now()
		if err := stop(h); err != nil {
			return failf("%s: %v", what, err)
		}
		exited, code := h.Wait(2 * time.Second)
		elapsed := time.Since(start)
		switch {
		case !exited:
			return failf("still running 2 s after %s", what)
		case code != 0:
			return failf("exit code %d after %s, want 0", code, what)
		case elapsed > idleExitBudget:
			return failf("took %v to exit after %s, want < %v", elapsed.Round(time.Millisecond), what, idleExitBudget)
		}
		return pass()
	}
}

// scenarioTestkitTeardown: the testkit closes stdin and kills after 750 ms;
// the plugin must be gone by then on its own.
func scenarioTestkitTeardown(ctx context.Context, s *Session) Outcome {
	h, _, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetTestkit(s.Kind)}, func(c *fakehost.Config) {
		c.EnvMode = fakehost.EnvInherit
	})
	if err != nil {
		return failf("%v", err)
	}
	rep, err := h.Shutdown(ctx, fakehost.LadderTestkit)
	if err != nil {
		return failf("%v", err)
	}
	if !rep.ExitedByItself {
		return failf("not gone %v after stdin closed; the testkit killed it", fakehost.TestkitExitWait)
	}
	return pass()
}
