package subjectsqlite

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance/conformancetest"
)

// TestConformance puts the built binary through every scenario the
// conformance runner applies to it: the generic lifecycle and wire suite,
// its kind's suite and its own. All must pass; only the generic scenarios
// that need the $harness/slow opt-in may skip.
func TestConformance(t *testing.T) {
	conformancetest.RequireAllPass(t, binaries.Path(t, binary), nil)
}
