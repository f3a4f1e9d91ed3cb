package fakehost

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// miniBin is the test plugin built once by TestMain. Everything here runs a
// real child process; nothing fakes the plugin side.
var (
	miniBin   string
	symlinkMu sync.Mutex
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fakehost-bin-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	miniBin = filepath.Join(dir, "miniplugin")
	build := exec.Command("go", "build", "-o", miniBin, "./testdata/miniplugin")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building miniplugin:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// miniAs returns the miniplugin under the name "miniplugin--<mode>", which is
// how it learns its mode when the host scrubs $MINIPLUGIN_MODE (the probe).
func miniAs(t testing.TB, mode string) string {
	t.Helper()
	symlinkMu.Lock()
	defer symlinkMu.Unlock()
	p := miniBin + "--" + mode
	if _, err := os.Lstat(p); err == nil {
		return p
	}
	if err := os.Symlink(miniBin, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// miniConfig is the daemon-mode config for a mode selected through the
// environment; MINIPLUGIN_MODE reaches the plugin because its manifest
// declares it in env_required.
func miniConfig(mode string) Config {
	return Config{Binary: miniBin, EnvMode: EnvDaemon, Env: map[string]string{"MINIPLUGIN_MODE": mode}}
}

// startRaw starts a host whose violations the test inspects itself.
func startRaw(t *testing.T, cfg Config) *Host {
	t.Helper()
	h, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close()
		if t.Failed() {
			t.Logf("wire log:\n%s\nstderr:\n%s", h.WireLog(), h.Stderr())
		}
	})
	return h
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustInit(t *testing.T, h *Host, o Handshake) *InitializeResult {
	t.Helper()
	res, err := h.Initialize(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
