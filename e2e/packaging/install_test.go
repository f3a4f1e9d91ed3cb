package packaging

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// snapshot records size, mode and mtime of every file and directory under
// dir except skip; any write, creation or removal changes one of them.
func snapshot(t *testing.T, dir string, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip != "" && (p == skip || strings.HasPrefix(p, skip+string(filepath.Separator))) {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%d %v %d", info.Size(), info.Mode(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffSnapshots(before, after map[string]string) []string {
	var changed []string
	for p, v := range after {
		if before[p] != v {
			changed = append(changed, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			changed = append(changed, p+" (removed)")
		}
	}
	return changed
}

type installRun struct {
	code   int
	stdout string
	stderr string
}

// runInstall runs scripts/install.sh with HOME and TMPDIR inside sandbox.
func runInstall(t *testing.T, r *Repo, sandbox string, args ...string) installRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(r.Root, "scripts", "install.sh")}, args...)...)
	cmd.Dir = sandbox
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(sandbox, "home"), "TMPDIR=" + filepath.Join(sandbox, "tmp")}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return installRun{code, stdout.String(), stderr.String()}
}

// newSandbox makes HOME (with an operator's existing plugins.yaml that must
// survive untouched) and TMPDIR under one temp dir.
func newSandbox(t *testing.T) string {
	t.Helper()
	sb := t.TempDir()
	for _, d := range []string{"home/.animus", "tmp"} {
		if err := os.MkdirAll(filepath.Join(sb, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	registry := "plugins:\n  operator-own:\n    binary: /opt/own\n"
	if err := os.WriteFile(filepath.Join(sb, "home/.animus/plugins.yaml"), []byte(registry), 0o644); err != nil {
		t.Fatal(err)
	}
	return sb
}

func TestInstallIntoPrefix(t *testing.T) {
	r, bins := builtPlugins(t)
	sb := newSandbox(t)
	// PREFIX lives in its own temp dir so that creating it touches nothing
	// in the sandbox, not even the sandbox directory's mtime.
	prefix := filepath.Join(t.TempDir(), "prefix with space")
	outside := snapshot(t, sb, "")
	binsBefore := snapshot(t, bins, "")
	scriptsBefore := snapshot(t, filepath.Join(r.Root, "scripts"), "")

	args := append([]string{"--prefix", prefix, "--from", bins}, r.Plugins...)
	res := runInstall(t, r, sb, args...)
	if res.code != 0 {
		t.Fatalf("install.sh exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	// A second run replaces the binaries in place (an upgrade).
	if res2 := runInstall(t, r, sb, args...); res2.code != 0 || res2.stdout != res.stdout {
		t.Fatalf("reinstall: exit %d, output changed:\n%s", res2.code, res2.stdout)
	}

	// Exactly the plugin binaries landed in PREFIX/bin, executable, intact.
	entries, err := os.ReadDir(filepath.Join(prefix, "bin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(r.Plugins) {
		t.Errorf("PREFIX/bin holds %d entries (%v), want the %d plugins and no leftovers", len(entries), entries, len(r.Plugins))
	}
	for _, p := range r.Plugins {
		name := "animus-" + p
		got, err := os.ReadFile(filepath.Join(prefix, "bin", name))
		if err != nil {
			t.Error(err)
			continue
		}
		want, _ := os.ReadFile(filepath.Join(bins, name))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: installed bytes differ from the build", name)
		}
		if st, _ := os.Stat(filepath.Join(prefix, "bin", name)); st.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v, want 0755", name, st.Mode().Perm())
		}
	}

	// The printed registry entries parse as plugins.yaml and point at the
	// installed binaries, which answer --manifest with the entry's name.
	_, yamlPart, ok := strings.Cut(res.stdout, "\nplugins:\n")
	if !ok {
		t.Fatalf("no plugins.yaml block in the output:\n%s", res.stdout)
	}
	var reg struct {
		Plugins map[string]struct {
			Binary string `yaml:"binary"`
		} `yaml:"plugins"`
	}
	if err := yaml.Unmarshal([]byte("plugins:\n"+yamlPart), &reg); err != nil {
		t.Fatalf("printed entries are not YAML: %v\n%s", err, yamlPart)
	}
	if len(reg.Plugins) != len(r.Plugins) {
		t.Errorf("%d entries printed, %d plugins", len(reg.Plugins), len(r.Plugins))
	}
	for _, p := range r.Plugins {
		name := "animus-" + p
		e, ok := reg.Plugins[name]
		if !ok || e.Binary != filepath.Join(prefix, "bin", name) {
			t.Errorf("entry %s = %+v, want binary %s", name, e, filepath.Join(prefix, "bin", name))
			continue
		}
		out, err := exec.Command(e.Binary, "--manifest").Output()
		if err != nil || !bytes.Contains(out, []byte(`"name":"`+name+`"`)) {
			t.Errorf("%s --manifest: %v %.100s", e.Binary, err, out)
		}
	}
	if !strings.Contains(res.stdout, "never edits") {
		t.Errorf("the output does not tell the operator the registry is theirs to edit:\n%s", res.stdout)
	}

	// Nothing outside PREFIX changed: HOME (with its plugins.yaml), TMPDIR,
	// the build output and the scripts.
	for what, pair := range map[string][2]map[string]string{
		"sandbox (HOME, TMPDIR)": {outside, snapshot(t, sb, "")},
		"bin dir":                {binsBefore, snapshot(t, bins, "")},
		"scripts/":               {scriptsBefore, snapshot(t, filepath.Join(r.Root, "scripts"), "")},
	} {
		if changed := diffSnapshots(pair[0], pair[1]); len(changed) > 0 {
			t.Errorf("install.sh changed files outside PREFIX in %s: %v", what, changed)
		}
	}
}

func TestInstallDestdir(t *testing.T) {
	r, bins := builtPlugins(t)
	sb := newSandbox(t)
	stage := filepath.Join(sb, "stage")
	res := runInstall(t, r, sb, "--prefix", "/usr/local", "--destdir", stage, "--from", bins, r.Plugins[0])
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	name := "animus-" + r.Plugins[0]
	if _, err := os.Stat(filepath.Join(stage, "usr/local/bin", name)); err != nil {
		t.Errorf("not staged under DESTDIR: %v", err)
	}
	// The registry entry names where the package will put it, not the stage.
	if !strings.Contains(res.stdout, "binary: /usr/local/bin/"+name+"\n") || strings.Contains(res.stdout, "binary: "+stage) {
		t.Errorf("entries should name /usr/local/bin, got:\n%s", res.stdout)
	}
}

// TestInstallRefuses: bad input installs nothing and says why.
func TestInstallRefuses(t *testing.T) {
	r, bins := builtPlugins(t)
	notPlugin := t.TempDir()
	if err := os.WriteFile(filepath.Join(notPlugin, "animus-fake"), []byte("#!/bin/sh\necho '{\"name\":\"animus-other\"}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		args     func(prefix string) []string
		code     int
		stderrIs string
	}{
		{"a plugin that was not built", func(p string) []string {
			return []string{"--prefix", p, "--from", bins, r.Plugins[0], "queue-nosuch"}
		}, 1, "animus-queue-nosuch is missing"},
		{"a binary that is not that plugin", func(p string) []string {
			return []string{"--prefix", p, "--from", notPlugin, "fake"}
		}, 1, "does not name animus-fake"},
		{"a relative prefix", func(string) []string {
			return []string{"--prefix", "local", "--from", bins, r.Plugins[0]}
		}, 2, "must be absolute"},
		{"no plugins named", func(p string) []string { return []string{"--prefix", p} }, 2, "no plugins named"},
		{"an unknown option", func(p string) []string { return []string{"--prefix", p, "--force", r.Plugins[0]} }, 2, "unknown option --force"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t)
			prefix := filepath.Join(sb, "prefix")
			before := snapshot(t, sb, "")
			res := runInstall(t, r, sb, tc.args(prefix)...)
			if res.code != tc.code || !strings.Contains(res.stderr, tc.stderrIs) {
				t.Fatalf("exit %d stderr %q; want exit %d and %q", res.code, res.stderr, tc.code, tc.stderrIs)
			}
			if changed := diffSnapshots(before, snapshot(t, sb, "")); len(changed) > 0 {
				t.Errorf("a refused install changed files: %v", changed)
			}
		})
	}
}
