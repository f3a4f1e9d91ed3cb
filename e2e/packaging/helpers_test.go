package packaging

import (
	"errors"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

// loadRepo reads the real tree this test runs in.
func loadRepo(t *testing.T) *Repo {
	t.Helper()
	r, err := LoadWorkingTree()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// builtPlugins is the real tree and the directory holding every plugin
// `make build` made from it (binaries.BuiltDir: skipped outside CI when
// they are not built).
func builtPlugins(t *testing.T) (*Repo, string) {
	t.Helper()
	r := loadRepo(t)
	return r, binaries.BuiltDir(t, r.PluginBinaries()...)
}

// clone copies a Repo so a case can doctor it.
func clone(r *Repo) *Repo {
	c := *r
	c.Plugins = append([]string(nil), r.Plugins...)
	return &c
}

// replace swaps old for new in s and fails when old is absent, so a seeded
// defect can never silently seed nothing.
func replace(t *testing.T, s *string, old, new string) {
	t.Helper()
	if !strings.Contains(*s, old) {
		t.Fatalf("seed: %q not found", old)
	}
	*s = strings.Replace(*s, old, new, 1)
}

// wantError fails unless one of errs contains want.
func wantError(t *testing.T, errs []error, want string) {
	t.Helper()
	if len(errs) == 0 {
		t.Fatalf("checker found nothing; want an error containing %q", want)
	}
	if !strings.Contains(errors.Join(errs...).Error(), want) {
		t.Fatalf("want an error containing %q, got:\n%v", want, errors.Join(errs...))
	}
}

// wantClean fails on any error.
func wantClean(t *testing.T, errs []error) {
	t.Helper()
	if len(errs) > 0 {
		t.Fatalf("%d problem(s):\n%v", len(errs), errors.Join(errs...))
	}
}
