package packaging

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

// TestImageEntrypoint runs the image's entrypoint script against a
// directory laid out like the image's /usr/local/bin: it lists every plugin
// from its own manifest, prints registry entries that parse, and passes
// arguments through to the command they name.
func TestImageEntrypoint(t *testing.T) {
	r, bins := builtPlugins(t)
	dir := t.TempDir()
	for _, p := range r.Plugins {
		if err := os.Symlink(filepath.Join(bins, "animus-"+p), filepath.Join(dir, "animus-"+p)); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(r.Root, "scripts", "docker-entrypoint.sh")
	version := binaries.StampedVersion(t)

	cmd := exec.Command("sh", script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "ANIMUS_PLUGINS_DIR=" + dir}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("entrypoint: %v\n%s", err, out)
	}
	listing, entries, ok := strings.Cut(string(out), "\nplugins:\n")
	if !ok {
		t.Fatalf("no plugins.yaml block:\n%s", out)
	}
	for _, p := range r.Plugins {
		name := "animus-" + p
		var line string
		for _, l := range strings.Split(listing, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				line = l
			}
		}
		if !strings.Contains(line, " "+version+" ") {
			t.Errorf("listing line for %s is %q, want its name and version %s", name, line, version)
		}
	}
	var reg struct {
		Plugins map[string]struct{ Binary string } `yaml:"plugins"`
	}
	if err := yaml.Unmarshal([]byte("plugins:\n"+entries), &reg); err != nil || len(reg.Plugins) != len(r.Plugins) {
		t.Errorf("registry entries: %v, %d of %d plugins:\n%s", err, len(reg.Plugins), len(r.Plugins), entries)
	}

	// With arguments it is a plain exec (docker run IMAGE animus-x --manifest).
	pass, err := exec.Command("sh", script, filepath.Join(dir, "animus-"+r.Plugins[0]), "--manifest").Output()
	if err != nil || !strings.Contains(string(pass), `"name":"animus-`+r.Plugins[0]+`"`) {
		t.Errorf("pass-through: %v %.200s", err, pass)
	}

	// A binary that fails its probe makes the listing fail loudly.
	if err := os.WriteFile(filepath.Join(dir, "animus-broken"), []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command("sh", script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "ANIMUS_PLUGINS_DIR=" + dir}
	out, err = cmd.Output()
	if err == nil || !strings.Contains(string(out), "animus-broken") || !strings.Contains(string(out), "FAILED") {
		t.Errorf("a broken binary went unnoticed: %v\n%s", err, out)
	}
}

// TestWaitReady runs the compose file's readiness gate against local
// servers: one that answers 503 (as Loki does for its first seconds) before
// 200, and one that never comes up.
func TestWaitReady(t *testing.T) {
	r := loadRepo(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("scripts/wait-ready.sh needs curl, which the e2e image has and this machine lacks")
	}
	var calls atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	}))
	defer slow.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/ready"
	dead.Close() // nothing listens there any more

	script := filepath.Join(r.Root, "scripts", "wait-ready.sh")
	cases := []struct {
		name   string
		urls   []string
		secs   string // WAIT_READY_SECS: the script counts whole seconds,
		ok     bool   // so a budget that must not run out is generous
		output string
	}{
		{"ready after two 503s", []string{slow.URL + "/ready"}, "20", true, "is ready"},
		{"never ready", []string{slow.URL + "/ready", deadURL}, "2", false, "not ready after 2 s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", append([]string{script}, tc.urls...)...)
			cmd.Env = append(os.Environ(), "WAIT_READY_SECS="+tc.secs)
			out, err := cmd.CombinedOutput()
			if (err == nil) != tc.ok || !strings.Contains(string(out), tc.output) {
				t.Fatalf("err %v, output:\n%s\nwant ok=%v and %q", err, out, tc.ok, tc.output)
			}
		})
	}
	if calls.Load() < 3 {
		t.Errorf("the server saw %d requests; the script did not retry", calls.Load())
	}
}
