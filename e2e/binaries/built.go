package binaries

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BuiltDir returns the directory `make build` filled ($ANIMUS_BIN_DIR, else
// <repo>/bin) after checking that it holds every binary in names. Tests
// that check release stamping or packaging need those exact builds, not
// the unstamped ones Find would make, so a missing binary fails the test
// under CI (where `make e2e` has just built them) and skips it, with the
// reason, elsewhere.
func BuiltDir(tb testing.TB, names ...string) string {
	tb.Helper()
	dir := os.Getenv(EnvBinDir)
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			tb.Fatal(err)
		}
		dir = filepath.Join(root, "bin")
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			if os.Getenv("CI") != "" {
				tb.Fatalf("CI: %v (make e2e builds bin/ first; this must not happen)", err)
			}
			tb.Skipf("needs the built plugins (run `make build` or `make e2e`): %v", err)
		}
	}
	return dir
}

// StampedVersion is the version `make build` stamped into the binaries:
// what the Makefile passes down (ANIMUS_VERSION, or VERSION as in the
// Docker e2e service), else the Makefile's own rule, git describe with its
// fallback.
func StampedVersion(tb testing.TB) string {
	tb.Helper()
	for _, env := range []string{"ANIMUS_VERSION", "VERSION"} {
		if v := os.Getenv(env); v != "" {
			return v
		}
	}
	root, err := RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("git", "describe", "--tags", "--always", "--dirty")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		tb.Logf("git describe: %v; expecting the Makefile's fallback 0.0.0-dev", err)
		return "0.0.0-dev"
	}
	return strings.TrimSpace(string(out))
}
