package durablepostgres

import (
	"net"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// TestBackendUnavailable is this plugin's form of the conformance
// scenario durable/backend-unavailable-32304, which breaks the project
// root and so skips here (the step log is in the namespace, not under the
// root): with the database unreachable, initialize still succeeds (the
// store opens on the first domain call), every durable method answers
// -32304 with data.retryable true, and the process keeps serving.
func TestBackendUnavailable(t *testing.T) {
	// A port nobody listens on: bound, then closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := pgns.NS{Plugin: pgns.Durable, DSN: "postgres://animus@" + addr + "/animus?sslmode=disable", Schema: "t_unreachable"}
	h := newHost(t, "host", s, e2etest.Declared(t, binaryName), map[string]string{"ANIMUS_DURABLE_PG_CONNECT_TIMEOUT_MS": "500"})
	p := h.start()
	calls := []struct {
		method string
		params any
	}{
		{"durable/begin_workflow_run", map[string]string{"run_id": "r", "phase_id": "p"}},
		{"durable/begin_step", stepParams("r", "p", "s", "k")},
		{"durable/commit_step", map[string]any{"step_id": "step_00000000000000000000000000000000", "outcome": "success"}},
		{"durable/abandon_step", map[string]any{"step_id": "step_00000000000000000000000000000000", "reason": "r"}},
		{"durable/query_run", map[string]string{"run_id": "r", "phase_id": "p"}},
		{"durable/recover_in_flight", map[string]uint64{"since_epoch": 0}},
	}
	for _, c := range calls {
		rpcErr, err := p.call(c.method, c.params, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		if !retryable(rpcErr) {
			t.Errorf("%s with the database unreachable: %+v, want -32304 with data.retryable true\n--- wire log ---\n%s", c.method, rpcErr, p.h.WireLog())
		}
	}
	if rpcErr, err := p.call("$/ping", nil, nil); err != nil || rpcErr != nil {
		t.Errorf("$/ping after the failures: %v %v", rpcErr, err)
	}
	p.shutdown()
}
