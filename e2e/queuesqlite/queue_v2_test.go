package queuesqlite

import (
	"context"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/conformance/conformancetest"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// The Animus 0.7 surface (issue 15): the built binary must pass the 0.7
// daemon's queue gate on the 0.7 queue client's handshake, and the whole
// queue-v2 suite (queue-v2.md §5.4) in the per-call process model.

// TestQueueV2Gate runs the copy of the daemon's require_generation_fenced_queue
// on the initialize reply the 0.7 queue client gets: protocol 1.1.0,
// host_info.version 0.7.0-rc.52, project_binding. A queue that fails it
// makes a 0.7 daemon refuse to start.
func TestQueueV2Gate(t *testing.T) {
	h := fakehost.New(t, e2etest.Config(t, binaryName, e2etest.Options{EnvMode: fakehost.EnvDaemonNarrow,
		Declared: e2etest.Declared(t, binaryName)}))
	ctx, cancel := context.WithTimeout(context.Background(), e2etest.SpawnTimeout)
	defer cancel()
	res, err := h.Initialize(ctx, fakehost.Daemon07.Handshake("queue"))
	if err != nil {
		t.Fatal(err)
	}
	caps, err := conformance.RequireGenerationFencedQueue(res)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gate passed: %+v", caps)
	e2etest.Shutdown(t, h, fakehost.LadderDaemon)
}

// TestQueueV2Conformance puts the built binary through every queue-v2
// scenario; all must pass and none may skip.
func TestQueueV2Conformance(t *testing.T) {
	conformancetest.RequireSuitePass(t, binaries.Path(t, binaryName), "queue-v2", conformance.QueueV2Suite(), nil)
}
