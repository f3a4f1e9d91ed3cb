package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// TransportHTTPSuite holds transport scenarios beyond the testkit ports in
// kind_transport.go, from the lifecycle rules of transport-http.md §2 and
// issue #9: start must not dial the socket even when one is listening, a
// second start is refused without losing the first listener, shutdown is
// idempotent from any state, health moves from degraded to healthy, a bad
// bind_addr is -32602, and exit, stdin EOF and the daemon's transport ladder
// all end a process that is serving, releasing its port. They apply to any
// transport_backend that binds TCP.
func TransportHTTPSuite() []Scenario {
	return []Scenario{
		{"transport", "start-does-not-dial", scenarioStartDoesNotDial},
		{"transport", "second-start-refused", scenarioSecondStart},
		{"transport", "shutdown-before-start", scenarioShutdownBeforeStart},
		{"transport", "health-degraded-then-healthy", scenarioTransportHealth},
		{"transport", "bad-bind-addr", scenarioBadBindAddr},
		{"transport", "exit-while-serving", scenarioServingStop("exit", func(h *fakehost.Host) error { return h.Notify("exit", nil) })},
		{"transport", "stdin-eof-while-serving", scenarioServingStop("stdin EOF", func(h *fakehost.Host) error { return h.CloseStdin() })},
		{"transport", "transport-ladder-while-serving", scenarioTransportLadder},
		{"transport", "health-probe-cycle", scenarioHealthProbeCycle},
	}
}

func thParams(dir, bind string) map[string]string {
	return map[string]string{"control_socket_path": filepath.Join(dir, "control.sock"), "project_root": dir, "bind_addr": bind}
}

// thStart starts on 127.0.0.1:0 and returns the bound address.
func thStart(ctx context.Context, h *fakehost.Host, dir string) (string, error) {
	resp, err := call(ctx, h, transportStartTTL, "transport/start", thParams(dir, "127.0.0.1:0"))
	if err != nil {
		return "", err
	}
	var info struct {
		BoundAddr string `json:"bound_addr"`
	}
	if err := wantResult(resp, &info); err != nil {
		return "", err
	}
	if info.BoundAddr == "" {
		return "", fmt.Errorf("transport/start returned no bound_addr")
	}
	return info.BoundAddr, nil
}

// serving is the preamble of the scenarios that need a listening
// transport: a handshaken process, a temp project dir, and transport/start
// on 127.0.0.1:0. On failure out is the outcome to return.
func serving(ctx context.Context, s *Session) (h *fakehost.Host, dir, addr string, out Outcome, ok bool) {
	h, out, ok = ready(ctx, s)
	if !ok {
		return nil, "", "", out, false
	}
	dir, err := s.TempDir()
	if err != nil {
		return nil, "", "", failf("%v", err), false
	}
	if addr, err = thStart(ctx, h, dir); err != nil {
		return nil, "", "", failf("%v", err), false
	}
	return h, dir, addr, out, true
}

// thReleased reports whether addr can be bound again.
func thReleased(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s still bound: %v", addr, err)
	}
	return ln.Close()
}

// scenarioStartDoesNotDial (transport-http.md §2.2, issue #9): with a
// control socket that exists and listens, transport/start still connects
// nothing; the socket may belong to a daemon that is not ready yet.
func scenarioStartDoesNotDial(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	dir, err := s.TempDir()
	if err != nil {
		return failf("%v", err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "control.sock"))
	if err != nil {
		return failf("%v", err)
	}
	defer ln.Close()
	dialled := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			dialled <- struct{}{}
		}
	}()
	if _, err := thStart(ctx, h, dir); err != nil {
		return failf("%v", err)
	}
	select {
	case <-dialled:
		return failf("transport/start connected to the control socket")
	case <-time.After(300 * time.Millisecond):
	}
	_, _ = call(ctx, h, shortCallBudget, "transport/shutdown", nil)
	return pass()
}

// scenarioSecondStart (issue #9): a second transport/start while serving is
// an error, not a second listener, and the first one keeps accepting.
func scenarioSecondStart(ctx context.Context, s *Session) Outcome {
	h, dir, addr, out, ok := serving(ctx, s)
	if !ok {
		return out
	}
	resp, err := call(ctx, h, transportStartTTL, "transport/start", thParams(dir, "127.0.0.1:0"))
	if err != nil {
		return failf("%v", err)
	}
	if resp.Error == nil {
		return failf("second transport/start succeeded (%s): the first listener is leaked", clip(resp.Result))
	}
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return failf("the first listener %s stopped accepting after the refused start: %v", addr, err)
	}
	conn.Close()
	_, _ = call(ctx, h, shortCallBudget, "transport/shutdown", nil)
	return pass()
}

// scenarioShutdownBeforeStart (spec §13.4 "safe to call more than once"):
// transport/shutdown with nothing started succeeds, twice.
func scenarioShutdownBeforeStart(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	for i := 1; i <= 2; i++ {
		resp, err := call(ctx, h, fakehost.TransportShutdownTimeout, "transport/shutdown", nil)
		if err != nil {
			return failf("%v", err)
		}
		if err := wantResult(resp, nil); err != nil {
			return failf("transport/shutdown #%d before start: %v", i, err)
		}
	}
	return pass()
}

func thHealth(ctx context.Context, h *fakehost.Host) (string, error) {
	resp, err := call(ctx, h, 2*time.Second, "health/check", nil)
	if err != nil {
		return "", err
	}
	var r struct {
		Status string `json:"status"`
	}
	if err := wantResult(resp, &r); err != nil {
		return "", err
	}
	return r.Status, nil
}

// scenarioTransportHealth (transport-http.md §3.1, issue #9): health/check
// is degraded before transport/start and healthy while serving.
func scenarioTransportHealth(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	if st, err := thHealth(ctx, h); err != nil || st != "degraded" {
		return failf("health before start: %q %v, want degraded", st, err)
	}
	dir, err := s.TempDir()
	if err != nil {
		return failf("%v", err)
	}
	if _, err := thStart(ctx, h, dir); err != nil {
		return failf("%v", err)
	}
	if st, err := thHealth(ctx, h); err != nil || st != "healthy" {
		return failf("health while serving: %q %v, want healthy", st, err)
	}
	_, _ = call(ctx, h, shortCallBudget, "transport/shutdown", nil)
	return pass()
}

// scenarioBadBindAddr (issue #9): a bind_addr that is not host:port is
// -32602, and the plugin keeps serving.
func scenarioBadBindAddr(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	dir, err := s.TempDir()
	if err != nil {
		return failf("%v", err)
	}
	for _, bind := range []string{"not an address", "127.0.0.1:99999"} {
		resp, err := call(ctx, h, transportStartTTL, "transport/start", thParams(dir, bind))
		if err != nil {
			return failf("%v", err)
		}
		if err := wantError(resp, -32602, ""); err != nil {
			return failf("bind_addr %q: %v", bind, err)
		}
	}
	if err := stillServes(ctx, h); err != nil {
		return failf("%v", err)
	}
	return pass()
}

// scenarioServingStop (host-and-lifecycle §8.3, issue #9): a transport that
// is serving, with a client connection open, still exits by itself within
// the testkit's 750 ms on exit or stdin EOF, and its port is free after.
func scenarioServingStop(what string, stop func(*fakehost.Host) error) func(context.Context, *Session) Outcome {
	return func(ctx context.Context, s *Session) Outcome {
		h, _, addr, out, ok := serving(ctx, s)
		if !ok {
			return out
		}
		conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			return failf("dial %s: %v", addr, err)
		}
		defer conn.Close()
		if err := stop(h); err != nil {
			return failf("%s: %v", what, err)
		}
		exited, code := h.Wait(fakehost.TestkitExitWait)
		if !exited {
			return failf("still running %v after %s while serving", fakehost.TestkitExitWait, what)
		}
		if code != 0 {
			return failf("exit code %d after %s, want 0", code, what)
		}
		if err := thReleased(addr); err != nil {
			return failf("after %s: %v", what, err)
		}
		return pass()
	}
}

// scenarioTransportLadder (transport-http.md §2.2): the daemon's stop
// sequence for a serving transport ends with the plugin exiting 0 by
// itself, transport/shutdown accepted, and the port released once
// transport/shutdown answered.
func scenarioTransportLadder(ctx context.Context, s *Session) Outcome {
	h, _, addr, out, ok := serving(ctx, s)
	if !ok {
		return out
	}
	rep, err := h.Shutdown(ctx, fakehost.LadderTransport)
	if err != nil {
		return failf("%v", err)
	}
	if !rep.TransportShutdownTolerated {
		return failf("transport/shutdown was not accepted: %s", thRaw(rep.TransportShutdownReply))
	}
	if !rep.ExitedByItself || rep.ExitCode != 0 {
		return failf("exit: by itself %v, code %d", rep.ExitedByItself, rep.ExitCode)
	}
	if err := thReleased(addr); err != nil {
		return failf("%v", err)
	}
	return pass()
}

func thRaw(r *fakehost.Response) string {
	if r == nil {
		return "no reply"
	}
	return string(r.Raw)
}

// scenarioHealthProbeCycle (transport-http.md §2.2, host-and-lifecycle §9):
// the daemon/health probe spawns the transport, handshakes, asks
// health/check without transport/start and shuts it down; the whole cycle
// must fit in 3 s.
func scenarioHealthProbeCycle(ctx context.Context, s *Session) Outcome {
	start := time.Now()
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	resp, err := call(ctx, h, 2*time.Second, "health/check", nil)
	if err != nil {
		return failf("%v", err)
	}
	var hc map[string]json.RawMessage
	if err := wantResult(resp, &hc); err != nil {
		return failf("%v", err)
	}
	rep, err := h.Shutdown(ctx, fakehost.LadderTransport)
	if err != nil {
		return failf("%v", err)
	}
	if !rep.ExitedByItself {
		return failf("the probe had to kill the plugin")
	}
	if d := time.Since(start); d > 3*time.Second {
		return failf("probe cycle took %v, the daemon allows 3 s", d)
	}
	return pass()
}
