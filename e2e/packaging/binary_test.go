package packaging

import (
	"debug/buildinfo"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"
)

// Every plugin `make build` made is statically linked, with cgo exactly
// when it links the SQLite driver.
func TestPluginBinariesAreStatic(t *testing.T) {
	r, bins := builtPlugins(t)
	cgo := 0
	for _, name := range r.PluginBinaries() {
		path := filepath.Join(bins, name)
		for _, err := range CheckPluginBinary(path) {
			t.Error(err)
		}
		info, err := buildinfo.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(info.Settings, debug.BuildSetting{Key: "CGO_ENABLED", Value: "1"}) {
			cgo++
		}
	}
	// Both branches of scripts/build-plugin.sh ran: the SQLite plugins
	// (and the PostgreSQL ones, whose import command reads SQLite) are
	// cgo, logs-loki, transport-http and trigger-slack are not.
	if cgo == 0 || cgo == len(r.PluginBinaries()) {
		t.Errorf("%d of %d plugins built with cgo; want some, not all", cgo, len(r.PluginBinaries()))
	}
}

func TestCheckPluginBuild(t *testing.T) {
	sqlite := []*debug.Module{{Path: SQLiteDriver, Version: "v1.14.53"}}
	build := func(deps []*debug.Module, settings ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{GoVersion: "go1.26", Deps: deps}
		for i := 0; i+1 < len(settings); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return info
	}
	for _, tc := range []struct {
		name   string
		interp string
		info   *debug.BuildInfo
		want   []string // one error containing each
	}{
		{"pure Go, no cgo", "", build(nil, "CGO_ENABLED", "0"), nil},
		{"SQLite, static cgo with the tags", "", build(sqlite, "CGO_ENABLED", "1", "-tags", "netgo,osusergo,sqlite_omit_load_extension"), nil},
		{"dynamically linked", "/lib64/ld-linux-x86-64.so.2", build(nil, "CGO_ENABLED", "0"), []string{"dynamically linked (program interpreter /lib64/ld-linux-x86-64.so.2)"}},
		{"pure Go built with cgo", "", build(nil, "CGO_ENABLED", "1"), []string{`pure Go but built with CGO_ENABLED="1"`}},
		{"SQLite without cgo", "", build(sqlite, "CGO_ENABLED", "0", "-tags", "netgo,osusergo,sqlite_omit_load_extension"), []string{`built with CGO_ENABLED="0"`}},
		{"SQLite missing two tags", "", build(sqlite, "CGO_ENABLED", "1", "-tags", "netgo"), []string{"without the osusergo build tag", "without the sqlite_omit_load_extension build tag"}},
		{"SQLite, no tags at all", "", build(sqlite, "CGO_ENABLED", "1"), []string{"without the netgo build tag", "without the osusergo build tag", "without the sqlite_omit_load_extension build tag"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := checkPluginBuild("animus-x", tc.interp, tc.info)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors %v, want %d", len(errs), errs, len(tc.want))
			}
			for _, w := range tc.want {
				wantError(t, errs, w)
			}
		})
	}
}

// A binary that is not a Go program at all (the system shell) is caught
// from the file, whatever its linking.
func TestCheckPluginBinaryNotGo(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	sh, err = filepath.EvalSymlinks(sh)
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, CheckPluginBinary(sh), "no Go build information")
	wantError(t, CheckPluginBinary(filepath.Join(t.TempDir(), "missing")), "not an ELF executable")
}
