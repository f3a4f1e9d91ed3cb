package queuepostgres

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance/conformancetest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// TestConformance puts the built binary through every scenario the
// conformance runner applies to it — the generic lifecycle and wire suite,
// the 0.3.2 queue suite and, since it passes the 0.7 gate, the queue-v2
// suite — once under each daemon line, exactly as e2e/queuesqlite does for
// animus-queue-sqlite: the scenarios are the same, only each gets a fresh
// schema where a SQLite queue gets a fresh project root. All must pass and
// none may skip.
func TestConformance(t *testing.T) {
	q := pgns.Queue.New(t)
	conformancetest.RequireAllPassEveryDaemonIsolated(t, binaries.Path(t, binaryName), q.Map(nil), q.Isolated(t))
}
