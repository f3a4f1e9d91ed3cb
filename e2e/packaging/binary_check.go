package packaging

import (
	"debug/buildinfo"
	"debug/elf"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
)

// SQLiteDriver is the one cgo dependency a plugin may have.
const SQLiteDriver = "github.com/mattn/go-sqlite3"

// staticCgoTags are the build tags a statically linked cgo plugin needs:
// Go's own resolver and user lookup (a static glibc cannot load NSS
// modules) and no SQLite load_extension (dlopen).
var staticCgoTags = []string{"netgo", "osusergo", "sqlite_omit_load_extension"}

// CheckPluginBinary checks what scripts/build-plugin.sh promises of a built
// plugin: an ELF executable with no program interpreter (statically
// linked: it starts without the dynamic loader and needs no particular
// glibc), built with cgo exactly when it links the SQLite driver, and then
// with staticCgoTags.
func CheckPluginBinary(path string) []error {
	name := filepath.Base(path)
	interp, err := programInterpreter(path)
	if err != nil {
		return []error{problem(name, 0, "not an ELF executable: %v", err)}
	}
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		errs := checkPluginBuild(name, interp, &debug.BuildInfo{})
		return append(errs, problem(name, 0, "no Go build information: %v", err))
	}
	return checkPluginBuild(name, interp, info)
}

// checkPluginBuild judges a binary by its program interpreter ("" for
// none) and its Go build information.
func checkPluginBuild(name, interp string, info *debug.BuildInfo) []error {
	var errs []error
	if interp != "" {
		errs = append(errs, problem(name, 0, "dynamically linked (program interpreter %s); build it with scripts/build-plugin.sh", interp))
	}
	if info.GoVersion == "" {
		return errs
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	linksSQLite := slices.ContainsFunc(info.Deps, func(m *debug.Module) bool { return m.Path == SQLiteDriver })
	switch cgo := settings["CGO_ENABLED"]; {
	case linksSQLite && cgo != "1":
		errs = append(errs, problem(name, 0, "links %s but was built with CGO_ENABLED=%q", SQLiteDriver, cgo))
	case !linksSQLite && cgo != "0":
		errs = append(errs, problem(name, 0, "pure Go but built with CGO_ENABLED=%q: cgo links the loader in for nothing", cgo))
	}
	if linksSQLite {
		tags := strings.Split(settings["-tags"], ",")
		for _, want := range staticCgoTags {
			if !slices.Contains(tags, want) {
				errs = append(errs, problem(name, 0, "links %s without the %s build tag (tags %q)", SQLiteDriver, want, settings["-tags"]))
			}
		}
	}
	return errs
}

// programInterpreter is the PT_INTERP of the ELF file at path: the dynamic
// loader it asks for, "" when it is statically linked.
func programInterpreter(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return "", err
			}
			return strings.TrimRight(string(b), "\x00"), nil
		}
	}
	return "", nil
}
