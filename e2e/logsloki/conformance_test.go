package logsloki

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance/conformancetest"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
)

func binaryPath(t testing.TB) string { return binaries.Path(t, binary) }

// TestConformance puts the binary through every scenario the conformance
// runner applies to a log-storage backend (generic + log-storage) with
// LOKI_URL pointing at a fakeloki (or the real Loki of make e2e-loki),
// once under each daemon line (0.7's generic host announces 1.2.0).
// All must pass; none of the log-storage scenarios may skip.
func TestConformance(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	conformancetest.RequireAllPassEveryDaemon(t, binaryPath(t), b.env)
}
