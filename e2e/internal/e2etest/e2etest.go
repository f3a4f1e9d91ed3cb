package e2etest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// schemaSet caches schemacheck.Default for the test binary: compiling the
// upstream schemas for every spawned host would dominate short tests.
var schemaSet = sync.OnceValues(schemacheck.Default)

// Schemas returns the upstream schema set, failing t if it cannot load.
func Schemas(t testing.TB) *schemacheck.Set {
	t.Helper()
	set, err := schemaSet()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// Ctx is a context that ends after d or when t ends, whichever is first.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Project returns a fresh project root that t removes at its end. Symlinks
// are resolved (macOS's /var → /private/var) because the daemon binds a
// plugin to the canonical path, so the root a test compares with is the
// one the plugin reports.
func Project(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
