package dist_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/packaging"
	"github.com/animus-plugins/animus-plugins/tools/dist"
)

// pluginTOML is plugin.toml as a reader of the upstream format sees it.
type pluginTOML struct {
	Schema          string   `toml:"schema"`
	Name            string   `toml:"name"`
	Version         string   `toml:"version"`
	PluginKind      string   `toml:"plugin_kind"`
	Description     string   `toml:"description"`
	ProtocolVersion string   `toml:"protocol_version"`
	PluginKinds     []string `toml:"plugin_kinds"`
	Capabilities    struct {
		Streaming    *bool    `toml:"streaming"`
		Progress     *bool    `toml:"progress"`
		Cancellation *bool    `toml:"cancellation"`
		SubjectKinds []string `toml:"subject_kinds"`
		Methods      []string `toml:"methods"`
	} `toml:"capabilities"`
	Binary struct {
		Default string `toml:"default"`
	} `toml:"binary"`
	Env []struct {
		Key         string `toml:"key"`
		Description string `toml:"description"`
		Required    *bool  `toml:"required"`
		Sensitive   *bool  `toml:"sensitive"`
	} `toml:"env"`
}

// buildDist compiles the generator as `make dist` runs it (go run): a plain
// build, so the tarballs are not compressed by race-instrumented code.
func buildDist(t *testing.T, root string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "animus-dist")
	cmd := exec.Command("go", "build", "-o", out, "./tools/cmd/animus-dist")
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./tools/cmd/animus-dist: %v\n%s", err, msg)
	}
	return out
}

// runDist runs the generator into a fresh directory and returns it and the
// listing it printed.
func runDist(t *testing.T, tool string, args ...string) (string, string) {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, append([]string{"-out", out}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("animus-dist: %v\n%s", err, stderr.String())
	}
	return out, stdout.String()
}

func TestDistOfTheBuiltBinaries(t *testing.T) {
	r, err := packaging.LoadWorkingTree()
	if err != nil {
		t.Fatal(err)
	}
	bins := binaries.BuiltDir(t, r.PluginBinaries()...)
	version := binaries.StampedVersion(t)
	licensePath := filepath.Join(r.Root, "LICENSE")
	license, err := os.ReadFile(licensePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(license, []byte("Apache License")) || !bytes.Contains(license, []byte("Version 2.0, January 2004")) {
		t.Fatal("LICENSE is not the Apache License 2.0 text")
	}
	native := runtime.GOOS + "_" + runtime.GOARCH
	mtime := time.Unix(1767225600, 0) // 2026-01-01, any fixed instant
	tool := buildDist(t, r.Root)
	args := append([]string{"-version", version, "-license", licensePath, "-mtime", fmt.Sprint(mtime.Unix()),
		"-platform", native + "=" + bins}, r.Plugins...)
	out, listing := runDist(t, tool, args...)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, p := range r.Plugins {
		bin := "animus-" + p
		t.Run(bin, func(t *testing.T) {
			// What the binary says about itself, asked independently of
			// the generator.
			d, err := dist.Describe(ctx, filepath.Join(bins, bin), version)
			if err != nil {
				t.Fatal(err)
			}
			checkTarball(t, filepath.Join(out, dist.ArtifactName(bin, version, native)+".tar.gz"), bin, d,
				filepath.Join(bins, bin), version, native, mtime, license)
		})
	}
	sums := checkSums(t, out)
	if len(sums) != len(r.Plugins) {
		t.Errorf("SHA256SUMS lists %d files for %d plugins", len(sums), len(r.Plugins))
	}
	for _, name := range sums {
		if !strings.Contains(listing, name) {
			t.Errorf("the generator's listing does not show %s:\n%s", name, listing)
		}
	}

	// Reproducible: a second run of the same inputs gives the same bytes.
	again, _ := runDist(t, tool, args...)
	a, _ := os.ReadFile(filepath.Join(out, dist.SumsFile))
	b, _ := os.ReadFile(filepath.Join(again, dist.SumsFile))
	if !bytes.Equal(a, b) {
		t.Errorf("two runs differ:\n%s\nvs\n%s", a, b)
	}
}

// checkTarball opens one artifact and checks every entry against the
// binary it was made from, which is probed again here independently.
func checkTarball(t *testing.T, path, plugin string, d *dist.Description, binPath, version, native string, mtime time.Time, license []byte) {
	top := dist.ArtifactName(plugin, version, native)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	files, headers, err := dist.ReadTarGz(raw)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range headers {
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(mtime) {
			t.Errorf("%s: uid %d gid %d %q/%q mtime %v; want 0/0, no names, %v", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime, mtime)
		}
		wantMode := int64(0o644)
		if h.Typeflag == tar.TypeDir || h.Name == top+"/"+plugin {
			wantMode = 0o755
		}
		if h.Mode != wantMode {
			t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, wantMode)
		}
	}
	wantNames := []string{top + "/", top + "/LICENSE", top + "/" + plugin, top + "/manifest.json", top + "/plugin.toml"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("entries %q, want %q (sorted, one top directory)", names, wantNames)
	}

	bin, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files[top+"/"+plugin], bin) {
		t.Error("the packed binary differs from the built one")
	}
	if !bytes.Equal(files[top+"/LICENSE"], license) {
		t.Error("LICENSE differs from the repository's")
	}
	out, err := exec.Command(binPath, "--manifest").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := files[top+"/manifest.json"]; !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(out)) {
		t.Errorf("manifest.json is not what `%s --manifest` prints:\n%s\nvs\n%s", plugin, got, out)
	}
	m := d.Manifest
	if m.Version != version {
		t.Errorf("manifest version %q, want the stamped %q", m.Version, version)
	}
	if v := d.Init.PluginInfo.Version; v != version {
		t.Errorf("initialize reports version %q, want %q", v, version)
	}
	checkPluginTOML(t, files[top+"/plugin.toml"], plugin, d)
}

func checkPluginTOML(t *testing.T, raw []byte, plugin string, d *dist.Description) {
	var pt pluginTOML
	md, err := toml.Decode(string(raw), &pt)
	if err != nil {
		t.Fatalf("plugin.toml does not parse: %v\n%s", err, raw)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Errorf("plugin.toml has keys outside the upstream format: %v", und)
	}
	m, caps := d.Manifest, d.Init.Capabilities
	for _, f := range []struct{ key, got, want string }{
		{"schema", pt.Schema, "animus.plugin.v1"},
		{"name", pt.Name, m.Name},
		{"version", pt.Version, m.Version},
		{"plugin_kind", pt.PluginKind, m.PluginKind},
		{"description", pt.Description, m.Description},
		{"protocol_version", pt.ProtocolVersion, m.ProtocolVersion},
		{"binary.default", pt.Binary.Default, plugin},
	} {
		if f.got != f.want {
			t.Errorf("plugin.toml %s = %q, want %q", f.key, f.got, f.want)
		}
	}
	c := pt.Capabilities
	if c.Streaming == nil || c.Progress == nil || c.Cancellation == nil ||
		*c.Streaming != caps.Streaming || *c.Progress != caps.Progress || *c.Cancellation != caps.Cancellation {
		t.Errorf("plugin.toml capabilities flags %v/%v/%v, initialize says %v/%v/%v",
			c.Streaming, c.Progress, c.Cancellation, caps.Streaming, caps.Progress, caps.Cancellation)
	}
	var methods []string
	for _, cap := range m.Capabilities {
		if !strings.HasPrefix(cap, "$") && !strings.HasPrefix(cap, "subject_kind:") {
			methods = append(methods, cap)
		}
	}
	if !slices.Equal(c.Methods, methods) {
		t.Errorf("plugin.toml methods %v, manifest capabilities (without markers) %v", c.Methods, methods)
	}
	var kinds []string
	for _, cap := range m.Capabilities {
		if k, ok := strings.CutPrefix(cap, "subject_kind:"); ok {
			kinds = append(kinds, k)
		}
	}
	if !slices.Equal(c.SubjectKinds, kinds) {
		t.Errorf("plugin.toml subject_kinds %v, manifest markers %v", c.SubjectKinds, kinds)
	}
	if m.PluginKind == "subject_backend" && len(kinds) == 0 {
		t.Error("a subject backend without subject_kinds")
	}
	if len(pt.Env) != len(m.EnvRequired) {
		t.Fatalf("plugin.toml has %d [[env]], the manifest %d env_required", len(pt.Env), len(m.EnvRequired))
	}
	for i, e := range m.EnvRequired {
		got := pt.Env[i]
		if got.Key != e.Name || got.Description != e.Description || got.Required == nil || *got.Required != e.Required ||
			got.Sensitive == nil || *got.Sensitive != e.Sensitive {
			t.Errorf("[[env]] %d = %+v, manifest %+v", i, got, e)
		}
	}
}

var sumLine = regexp.MustCompile(`^([0-9a-f]{64})  (\S+\.tar\.gz)$`)

// checkSums verifies SHA256SUMS in Go and, where installed, with sha256sum
// itself (the tool a user runs); it returns the listed names.
func checkSums(t *testing.T, dir string) []string {
	f, err := os.Open(filepath.Join(dir, dist.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := sumLine.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Errorf("SHA256SUMS line %q is not `<sha256>  <file>`", sc.Text())
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, m[2]))
		if err != nil {
			t.Error(err)
			continue
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != m[1] {
			t.Errorf("SHA256SUMS: %s does not match", m[2])
		}
		names = append(names, m[2])
	}
	if !slices.IsSorted(names) {
		t.Errorf("SHA256SUMS not sorted: %v", names)
	}
	onDisk, _ := filepath.Glob(filepath.Join(dir, "*.tar.gz"))
	if len(onDisk) != len(names) {
		t.Errorf("%d tarballs on disk, %d in SHA256SUMS", len(onDisk), len(names))
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "--check", "--strict", dist.SumsFile)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum --check: %v\n%s", err, out)
		}
	} else {
		t.Log("sha256sum not installed; SHA256SUMS checked in Go only")
	}
	return names
}
