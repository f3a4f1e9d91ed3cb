package packaging

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

// loadRepo reads the real tree this test runs in.
func loadRepo(t *testing.T) *Repo {
	t.Helper()
	root, err := binaries.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	r, err := LoadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Plugins) == 0 {
		t.Fatal("no plugins/*/main.go found: the checks below would prove nothing")
	}
	return r
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

// binDir is where `make build` put the binaries (ANIMUS_BIN_DIR in make
// e2e). Missing binaries fail in CI and skip, with the reason, elsewhere.
func binDir(t *testing.T, r *Repo) string {
	t.Helper()
	dir := os.Getenv(binaries.EnvBinDir)
	if dir == "" {
		dir = filepath.Join(r.Root, "bin")
	}
	for _, p := range r.Plugins {
		if _, err := os.Stat(filepath.Join(dir, "animus-"+p)); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI: %v (make e2e builds bin/ first; this must not happen)", err)
			}
			t.Skipf("needs the built plugins (run `make build` or `make e2e`): %v", err)
		}
	}
	return dir
}
