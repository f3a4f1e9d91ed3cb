package queuesqlite

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance/conformancetest"
)

// TestConformance puts the built binary through every scenario the
// conformance runner applies to it: the generic lifecycle and wire suite,
// its kind's suite and its own, once under each daemon line (0.6, 0.7:
// the handshakes differ by line). All must pass and none may skip: the
// busy scenarios reach the binary's harness/slow through
// pluginkit.HarnessEnv.
func TestConformance(t *testing.T) {
	conformancetest.RequireAllPassEveryDaemon(t, binaries.Path(t, binaryName), nil)
}
