package binaries

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// EnvBinDir names the directory of prebuilt binaries.
const EnvBinDir = "ANIMUS_BIN_DIR"

// sources maps binaries that are not plugins/<dir> to their packages,
// relative to the repository root.
var sources = map[string]string{
	"animus-example":            "examples/animus-example",
	"animus-plugin-conformance": "e2e/cmd/animus-plugin-conformance",
	"animus-demo":               "tools/cmd/animus-demo",
	"bare-echo":                 "e2e/bench/testdata/bareecho",
}

var (
	mu    sync.Mutex
	built = map[string]string{}
)

// Path returns the absolute path of binary name (e.g. "animus-example" or
// "animus-subject-sqlite"), failing the test if it cannot be had.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	p, err := Find(name)
	if err != nil {
		tb.Fatalf("binary %s: %v", name, err)
	}
	return p
}

// Find returns the path of binary name: $ANIMUS_BIN_DIR/name when that
// exists, else a build of its package into .cache/e2e-bin (once per process).
func Find(name string) (string, error) {
	if dir := os.Getenv(EnvBinDir); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return filepath.Abs(p)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[name]; ok {
		return p, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	pkg, ok := sources[name]
	if !ok {
		dir, isPlugin := strings.CutPrefix(name, "animus-")
		if !isPlugin {
			return "", fmt.Errorf("unknown binary %q", name)
		}
		pkg = filepath.Join("plugins", dir)
	}
	out := filepath.Join(root, ".cache", "e2e-bin", name)
	cmd := exec.Command("go", "build", "-o", out, "./"+pkg)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./%s: %v\n%s", pkg, err, msg)
	}
	built[name] = out
	return out, nil
}

// RepoRoot is the directory holding go.work, found from the working
// directory upwards.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.work above the working directory")
		}
		dir = parent
	}
}
