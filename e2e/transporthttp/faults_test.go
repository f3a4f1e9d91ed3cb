package transporthttp

import (
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
)

// No daemon at the socket: every proxied route is 503 daemon_unreachable,
// readiness says so, liveness does not care, and the transport picks the
// daemon up as soon as it appears.
func TestDaemonDown(t *testing.T) {
	g := startGateway(t, setup{})
	for _, path := range []string{"/api/v1/daemon/status", "/api/v1/workflows", "/api/v1/daemon/logs", "/api/v1/daemon/events"} {
		wantError(t, path+" with no daemon", g.get(path), 503, "unavailable", "daemon_unreachable")
	}
	wantError(t, "readyz with no daemon", g.get("/readyz"), 503, "unavailable", "daemon_unreachable")
	wantOK(t, "healthz with no daemon", g.get("/healthz"), nil)
	// Validation still comes first: bad input is 400 even with the daemon down.
	wantError(t, "bad input with no daemon", g.get("/api/v1/workflows?status=bogus"), 400, "invalid_request", "invalid_input")

	fakedaemon.New(t, fakedaemon.Options{Path: g.socket})
	wantOK(t, "after the daemon started", g.get("/api/v1/daemon/status"), nil)
	wantOK(t, "readyz after the daemon started", g.get("/readyz"), nil)
}

// A connection that dies mid-call is 502 wire_error, as is a reply that is
// not JSON; the next request gets a fresh connection and succeeds. A
// restarted daemon is picked up without restarting the transport.
func TestDaemonFaultsMidCall(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	wantOK(t, "warm-up", g.get("/api/v1/workflows/wf-1"), nil)

	g.d.DropOn("workflow/get")
	wantError(t, "connection dropped mid-call", g.get("/api/v1/workflows/wf-1"), 502, "unavailable", "wire_error")
	g.d.ClearFaults()
	wantOK(t, "after the drop", g.get("/api/v1/workflows/wf-1"), nil)

	g.d.GarbageOn("queue/stats")
	wantError(t, "undecodable reply", g.get("/api/v1/queue/stats"), 502, "unavailable", "wire_error")
	g.d.ClearFaults()
	wantOK(t, "after the garbage", g.get("/api/v1/queue/stats"), nil)

	g.d.Close()
	wantError(t, "daemon stopped", g.get("/api/v1/daemon/status"), 503, "unavailable", "daemon_unreachable")
	d2 := fakedaemon.New(t, fakedaemon.Options{Path: g.socket})
	wantOK(t, "daemon restarted", g.get("/api/v1/daemon/status"), nil)
	if d2.Connections() != 1 {
		t.Errorf("the restarted daemon saw %d connections, want 1", d2.Connections())
	}
}

// A daemon slower than control_timeout_ms is 504 daemon_timeout. The
// daemon answers a connection's requests in order, so the timed-out call
// keeps its connection busy: the next call goes to another connection, and
// once the late reply has come and gone, replies are still matched by id.
func TestControlTimeout(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}, config: map[string]any{"control_timeout_ms": 200, "control_pool_size": 2}})
	g.d.SetDelay("workflow/get", 600*time.Millisecond)
	wantError(t, "slow daemon", g.get("/api/v1/workflows/wf-1"), 504, "timeout", "daemon_timeout")
	g.d.ClearFaults()
	var run struct {
		ID string `json:"id"`
	}
	wantOK(t, "call while the late reply is pending", g.get("/api/v1/workflows/wf-3"), &run)
	if run.ID != "wf-3" || g.d.Connections() != 2 {
		t.Fatalf("got %s over %d connections, want wf-3 over a second connection", run.ID, g.d.Connections())
	}
	time.Sleep(600 * time.Millisecond) // the late wf-1 reply arrives and is dropped
	for i := 0; i < 3; i++ {
		wantOK(t, "after the late reply", g.get("/api/v1/workflows/wf-2"), &run)
		if run.ID != "wf-2" {
			t.Fatalf("got %s's reply for wf-2", run.ID)
		}
	}
}

// Every daemon error category gets its honest status (issue #9), including
// RBAC's -32602 permission_denied.
func TestCategoryStatuses(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	cases := []struct {
		category string
		status   int
	}{
		{"not_found", 404}, {"invalid_request", 400}, {"permission_denied", 403}, {"conflict", 409},
		{"not_supported", 501}, {"unavailable", 503}, {"internal", 500},
	}
	for _, c := range cases {
		g.d.FailWith("queue/stats", c.category, "injected")
		r := g.get("/api/v1/queue/stats")
		wantError(t, c.category, r, c.status, c.category, c.category)
	}
	g.d.ClearFaults()
	g.d.Deny("queue/stats")
	r := g.get("/api/v1/queue/stats")
	wantError(t, "RBAC deny", r, 403, "permission_denied", "permission_denied")
	if r.env.Error.RPCCode != -32602 {
		t.Errorf("RBAC deny rpc_code %d, want -32602 (branch on category, not code)", r.env.Error.RPCCode)
	}
}

// Concurrent requests share a small pool: it grows past one connection
// under load and never past control_pool_size.
func TestPoolIsBounded(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}, config: map[string]any{"control_pool_size": 4}})
	g.d.SetDelay("daemon/status", 150*time.Millisecond)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := g.get("/api/v1/daemon/status"); r.status != 200 {
				errs <- string(r.body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent request failed: %s", e)
	}
	if n := g.d.Connections(); n < 2 || n > 4 {
		t.Errorf("16 concurrent slow requests used %d connections, want 2..4", n)
	}
}
