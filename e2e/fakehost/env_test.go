package fakehost

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The spawned plugin reports its environment (mini/env) and cwd (mini/cwd);
// only allowlisted + declared-and-set + extra variables may reach it in the
// daemon modes.
func TestSpawnEnv(t *testing.T) {
	overlay := map[string]string{
		"MINIPLUGIN_MODE": "good",      // declared in env_required: passes
		"MINI_DECLARED":   "d",         // declared: passes
		"MINI_UNDECLARED": "u",         // scrubbed in daemon modes
		"USER":            "tester",    // full allowlist only
		"TERM":            "xterm",     // full allowlist only
		"HOME":            "/home/tst", // both allowlists
	}
	extra := map[string]string{"MINI_EXTRA": "e"}
	cases := []struct {
		mode    EnvMode
		present []string
		absent  []string
	}{
		{EnvDaemon, []string{"MINIPLUGIN_MODE", "MINI_DECLARED", "MINI_EXTRA", "USER", "TERM", "HOME"}, []string{"MINI_UNDECLARED", "MINI_DECLARED_UNSET"}},
		{EnvDaemonNarrow, []string{"MINIPLUGIN_MODE", "MINI_DECLARED", "MINI_EXTRA", "HOME"}, []string{"MINI_UNDECLARED", "USER", "TERM", "SHELL"}},
		{EnvInherit, []string{"MINIPLUGIN_MODE", "MINI_DECLARED", "MINI_EXTRA", "MINI_UNDECLARED", "USER", "HOME"}, nil},
	}
	for _, c := range cases {
		t.Run(c.mode.String(), func(t *testing.T) {
			t.Parallel()
			h := New(t, Config{Binary: miniBin, EnvMode: c.mode, Env: overlay, Extra: extra})
			mustInit(t, h, Handshake{Preset: PresetDaemon})
			resp, err := h.Call(testCtx(t), "mini/env", nil)
			if err != nil {
				t.Fatal(err)
			}
			var env []string
			if err := json.Unmarshal(resp.Result, &env); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				got[k] = v
			}
			for _, k := range c.present {
				if _, ok := got[k]; !ok {
					t.Errorf("%s missing from the plugin's environment", k)
				}
			}
			for _, k := range c.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s leaked into the plugin's environment", k)
				}
			}
			if got["MINI_DECLARED"] != "d" || got["MINI_EXTRA"] != "e" {
				t.Errorf("values: MINI_DECLARED=%q MINI_EXTRA=%q", got["MINI_DECLARED"], got["MINI_EXTRA"])
			}
			if c.mode != EnvInherit {
				// Exactly the allowed set, nothing else (e.g. no GOFLAGS, PWD).
				allowed := map[string]bool{"MINIPLUGIN_MODE": true, "MINI_DECLARED": true, "MINI_EXTRA": true}
				for _, k := range c.mode.allowlist() {
					allowed[k] = true
				}
				var stray []string
				for k := range got {
					if !allowed[k] {
						stray = append(stray, k)
					}
				}
				sort.Strings(stray)
				if len(stray) > 0 {
					t.Errorf("unexpected variables: %v", stray)
				}
			}
		})
	}
}

// With Dir empty the host makes a temp project dir, runs the plugin there
// (cwd = project root) and removes it on Close.
func TestSpawnDirAndArgs(t *testing.T) {
	h, err := Start(testCtx(t), miniConfig("good"))
	if err != nil {
		t.Fatal(err)
	}
	mustInit(t, h, Handshake{Preset: PresetDaemon})
	resp, err := h.Call(testCtx(t), "mini/cwd", nil)
	if err != nil {
		t.Fatal(err)
	}
	var cwd string
	json.Unmarshal(resp.Result, &cwd)
	if cwd != h.ProjectRoot() {
		t.Errorf("plugin cwd = %q, want project root %q", cwd, h.ProjectRoot())
	}
	h.ExpectNoViolations(t)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.Dir()); !os.IsNotExist(err) {
		t.Errorf("temp project dir %s not removed: %v", h.Dir(), err)
	}
	// A caller-provided Dir is left alone.
	dir := t.TempDir()
	cfg := miniConfig("good")
	cfg.Dir = dir
	h2 := New(t, cfg)
	h2.Close()
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("caller's dir removed: %v", err)
	}
	if !slices.Contains(h2.cmd.Args, miniBin) || len(h2.cmd.Args) != 1 {
		t.Errorf("argv = %v, want just the binary", h2.cmd.Args)
	}
}
