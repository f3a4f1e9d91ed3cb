package durablepostgres

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/conformance/conformancetest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// TestConformance puts the built binary through every scenario the
// conformance runner applies to it — the generic lifecycle and wire suite
// and the durable suite — once under each daemon line, exactly as
// e2e/durablesqlite does for animus-durable-sqlite: the scenarios are the
// same, only each gets a fresh schema where a SQLite step log gets a fresh
// project root, and the backend-unavailable scenario points it at an
// address nothing answers at (pgns.Durable.Unreachable) where SQLite gets a
// project root its file cannot be created under. All must pass and none
// may skip.
func TestConformance(t *testing.T) {
	s := pgns.Durable.New(t)
	conformancetest.RequireAllPassEveryDaemonWith(t, binaries.Path(t, binaryName), s.Map(nil),
		conformance.Options{Isolate: s.Isolated(t), Unreachable: pgns.Durable.Unreachable()})
}
