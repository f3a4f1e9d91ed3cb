package dist

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// example returns a directory holding the example plugin under the names
// given (copies, so a case may rename one) and its reported version.
func example(t *testing.T, names ...string) (string, string) {
	t.Helper()
	src := binaries.Path(t, "animus-example")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m, err := fakehost.Probe(context.Background(), src, fakehost.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, m.Version
}

func TestRunWritesOneTarballPerPluginAndPlatform(t *testing.T) {
	dir, version := example(t, "animus-example")
	out := t.TempDir()
	arts, err := Run(context.Background(), Config{
		Version: version, OutDir: out, License: []byte("license text\n"), MTime: time.Unix(0, 0),
		Platforms: []Platform{{OS: runtime.GOOS, Arch: runtime.GOARCH, BinDir: dir}},
		Plugins:   []string{"example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(arts) != 1 || arts[0].Plugin != "animus-example" {
		t.Fatalf("artifacts %+v", arts)
	}
	sums, err := os.ReadFile(filepath.Join(out, SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	want := arts[0].SHA256 + "  " + ArtifactName("animus-example", version, runtime.GOOS+"_"+runtime.GOARCH) + ".tar.gz\n"
	if string(sums) != want {
		t.Errorf("SHA256SUMS = %q, want %q", sums, want)
	}
}

// TestRunRefusesBadInputs: each case breaks one input; Run must refuse it
// with a message that names the problem, and write no SHA256SUMS.
func TestRunRefusesBadInputs(t *testing.T) {
	native := Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	cases := []struct {
		name string
		edit func(t *testing.T, cfg *Config)
		want string
	}{
		{"version not the stamped one", func(t *testing.T, cfg *Config) {
			cfg.Version = "v9.9.9"
		}, `the build was stamped "v9.9.9"`},
		{"version with a separator", func(t *testing.T, cfg *Config) {
			cfg.Version = "v1/2"
		}, "must be non-empty"},
		{"no LICENSE", func(t *testing.T, cfg *Config) {
			cfg.License = nil
		}, "no LICENSE"},
		{"no native build to read metadata from", func(t *testing.T, cfg *Config) {
			cfg.Platforms[0].Arch = other
		}, "no " + runtime.GOOS + "_" + runtime.GOARCH + " build given"},
		{"a native binary packed as another arch", func(t *testing.T, cfg *Config) {
			cfg.Platforms = append(cfg.Platforms, Platform{OS: "linux", Arch: other, BinDir: cfg.Platforms[0].BinDir})
		}, "ELF machine"},
		{"a binary missing", func(t *testing.T, cfg *Config) {
			cfg.Plugins = append(cfg.Plugins, "queue-nosuch")
		}, "animus-queue-nosuch"},
		{"a binary whose manifest has another name", func(t *testing.T, cfg *Config) {
			dir, _ := example(t, "animus-renamed")
			cfg.Platforms[0].BinDir, cfg.Plugins = dir, []string{"renamed"}
		}, `manifest name is "animus-example"`},
		{"not a plugin at all", func(t *testing.T, cfg *Config) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "animus-fake"), []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			cfg.Platforms[0].BinDir, cfg.Plugins = dir, []string{"fake"}
		}, "manifest probe"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, version := example(t, "animus-example")
			p := native
			p.BinDir = dir
			cfg := Config{Version: version, OutDir: t.TempDir(), License: []byte("x"), Platforms: []Platform{p}, Plugins: []string{"example"}}
			tc.edit(t, &cfg)
			_, err := Run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v; want an error containing %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(cfg.OutDir, SumsFile)); err == nil {
				t.Error("SHA256SUMS written although the run failed")
			}
		})
	}
}

func TestPluginTOMLRoundTripsAwkwardText(t *testing.T) {
	desc := "quotes \" and \\ backslash, a tab\t, newline\n, … and <project_root>"
	d := &Description{
		Manifest: &fakehost.Manifest{Name: "animus-x", Version: "v1", PluginKind: "subject_backend", Description: desc,
			ProtocolVersion: "1.1.0", Capabilities: []string{"task/list", "health/check", "subject_kind:task", "$harness/slow"},
			EnvRequired: []fakehost.EnvRequirement{{Name: "A", Description: desc, Sensitive: true}}},
		Init: &fakehost.InitializeResult{Capabilities: fakehost.PluginCapabilities{Streaming: true, Cancellation: true}},
	}
	var got struct {
		Description  string
		Capabilities struct {
			Methods      []string
			SubjectKinds []string `toml:"subject_kinds"`
			Streaming    bool
		}
		Env []struct {
			Key, Description string
			Sensitive        bool
		}
	}
	if _, err := toml.Decode(string(PluginTOML(d, "animus-x")), &got); err != nil {
		t.Fatalf("%v\n%s", err, PluginTOML(d, "animus-x"))
	}
	if got.Description != desc || got.Env[0].Description != desc || !got.Env[0].Sensitive {
		t.Errorf("round trip lost text: %+v", got)
	}
	if strings.Join(got.Capabilities.Methods, ",") != "task/list,health/check" || strings.Join(got.Capabilities.SubjectKinds, ",") != "task" {
		t.Errorf("methods %v kinds %v: markers must move out of methods", got.Capabilities.Methods, got.Capabilities.SubjectKinds)
	}
}

func TestWriteTarGz(t *testing.T) {
	entries := []Entry{{Name: "b", Mode: 0o644, Data: []byte("2")}, {Name: "a", Mode: 0o755, Data: []byte("1")}}
	var one, two bytes.Buffer
	if err := WriteTarGz(&one, "top", time.Unix(100, 5), entries); err != nil {
		t.Fatal(err)
	}
	// Same content in another order, another sub-second: same bytes.
	if err := WriteTarGz(&two, "top", time.Unix(100, 999), []Entry{entries[1], entries[0]}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Bytes(), two.Bytes()) {
		t.Error("entry order or sub-second mtime changed the bytes")
	}
	files, headers, err := ReadTarGz(one.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(headers) != 3 || headers[0].Name != "top/" || headers[1].Name != "top/a" || string(files["top/b"]) != "2" {
		t.Errorf("headers %v files %v", headers, files)
	}
	if err := WriteTarGz(&bytes.Buffer{}, "top", time.Unix(0, 0), append(entries, entries[0])); err == nil {
		t.Error("duplicate entry accepted")
	}
}
