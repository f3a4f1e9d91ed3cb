package subjectpostgres

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/conformance/conformancetest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// TestConformance puts the built binary through every scenario the
// conformance runner applies to it — the generic lifecycle and wire suite
// and the subject suite (the official testkit's, ported, plus extras) —
// once under each daemon line, exactly as e2e/subjectsqlite does for
// animus-subject-sqlite: the scenarios are the same, only each gets a
// fresh schema where a SQLite database gets a fresh project root (a
// namespace is shared by every root pointing at it, so without Isolate
// the scenarios would see each other's subjects). All must pass and none
// may skip.
func TestConformance(t *testing.T) {
	s := pgns.Subject.New(t)
	conformancetest.RequireAllPassEveryDaemonWith(t, binaries.Path(t, binaryName), s.Map(nil),
		conformance.Options{Isolate: s.Isolated(t), Unreachable: pgns.Subject.Unreachable()})
}
