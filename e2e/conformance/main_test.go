package conformance_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// This file owns the built binaries: TestMain builds them once, and
// TestCommandExitCodes checks the command's contract on them.

// binDir holds the binaries TestMain builds once: the four fixture plugins
// (named after their kind), the conformance command and the example plugin.
// Everything these tests run is a real child process.
var binDir string

// buildTargets are the packages TestMain builds, relative to this package.
var buildTargets = []string{
	"./testdata/fixtures/subject",
	"./testdata/fixtures/trigger",
	"./testdata/fixtures/transport",
	"./testdata/fixtures/log-storage",
	"../cmd/animus-plugin-conformance",
	"../../examples/animus-example", // a workspace module beside e2e
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "conformance-bin-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	goBin, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "the go command is needed to build the fixtures:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// One go build for all of them: -o <dir>/ names each main package's
	// binary after its directory and compiles them in parallel.
	build := exec.Command(goBin, append([]string{"build", "-o", dir + string(filepath.Separator)}, buildTargets...)...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building fixtures:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func bin(name string) string { return filepath.Join(binDir, name) }

func schemas(t *testing.T) *schemacheck.Set {
	t.Helper()
	set, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestCommandExitCodes runs the built animus-plugin-conformance the way CI
// and operators do and checks its contract with the official harness
// (host-and-lifecycle §13): 0 when nothing failed, 1 when a scenario
// failed, 2 when the plugin cannot even be probed and handshaken.
func TestCommandExitCodes(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		out  string // must appear on stdout or stderr
	}{
		{"example plugin passes", []string{bin("animus-example")}, 0,
			"conformance animus-example (custom)"},
		{"broken fixture fails", []string{"--env", "FIXTURE_MODE=broken", "--run", "trigger/", bin("trigger")}, 1,
			"FAIL  trigger/event-payload-shape"},
		{"missing binary is a harness error", []string{filepath.Join(binDir, "no-such-plugin")}, 2,
			"plugin binary"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t, 2*time.Minute)
			cmd := exec.CommandContext(ctx, bin("animus-plugin-conformance"), tc.args...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			switch {
			case errors.As(err, &exit):
				code = exit.ExitCode()
			case err != nil:
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, out.String())
			}
			if !strings.Contains(out.String(), tc.out) {
				t.Errorf("output lacks %q:\n%s", tc.out, out.String())
			}
		})
	}
}
