package packaging

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

// Problem is one finding, located in a file (and a line when known).
type Problem struct {
	File string
	Line int // 0 when the finding is about the file as a whole
	Msg  string
}

func (p *Problem) Error() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return p.File + ": " + p.Msg
}

// problem builds a *Problem from a format.
func problem(file string, line int, format string, args ...any) error {
	return &Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Repo is the packaging-relevant content of a source tree, read once so the
// checkers can run on it and on doctored copies of it alike.
type Repo struct {
	Root         string // absolute path of the tree (the Docker build context)
	Dockerfile   string
	Compose      string
	DockerIgnore string
	Makefile     string
	// Plugins are the plugin directory names, one per plugins/<dir>/main.go;
	// each builds to bin/animus-<dir>.
	Plugins []string
}

// Files read by LoadRepo, relative to the root.
const (
	DockerfilePath   = "Dockerfile"
	ComposePath      = "docker-compose.e2e.yml"
	DockerIgnorePath = ".dockerignore"
	MakefilePath     = "Makefile"
)

// LoadRepo reads the packaging files of the tree at root.
func LoadRepo(root string) (*Repo, error) {
	r := &Repo{Root: root}
	for path, dst := range map[string]*string{
		DockerfilePath: &r.Dockerfile, ComposePath: &r.Compose,
		DockerIgnorePath: &r.DockerIgnore, MakefilePath: &r.Makefile,
	} {
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			return nil, err
		}
		*dst = string(b)
	}
	mains, err := filepath.Glob(filepath.Join(root, "plugins", "*", "main.go"))
	if err != nil {
		return nil, err
	}
	for _, m := range mains {
		r.Plugins = append(r.Plugins, filepath.Base(filepath.Dir(m)))
	}
	sort.Strings(r.Plugins)
	return r, nil
}

// LoadWorkingTree is LoadRepo for the tree the caller runs in (the
// directory holding go.work, from the working directory upwards). A tree
// without plugins is an error: every check on it would pass vacuously.
func LoadWorkingTree() (*Repo, error) {
	root, err := binaries.RepoRoot()
	if err != nil {
		return nil, err
	}
	r, err := LoadRepo(root)
	if err != nil {
		return nil, err
	}
	if len(r.Plugins) == 0 {
		return nil, fmt.Errorf("no plugins/*/main.go under %s: the checks would prove nothing", root)
	}
	return r, nil
}

// exists reports whether a path relative to the root exists.
func (r *Repo) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(r.Root, filepath.FromSlash(rel)))
	return err == nil
}

// BuiltBinaries are the names `make build` writes to bin/: animus-<dir> for
// every plugin, the example plugin, and the e2e commands it builds by their
// animus-<name> pattern (e2e/cmd/animus-<name> and tools/cmd/animus-<name>).
func (r *Repo) BuiltBinaries() map[string]bool {
	out := map[string]bool{"animus-example": r.exists("examples/animus-example")}
	for _, b := range r.PluginBinaries() {
		out[b] = true
	}
	for _, module := range []string{"e2e", "tools"} {
		cmds, _ := filepath.Glob(filepath.Join(r.Root, module, "cmd", "animus-*"))
		for _, c := range cmds {
			out[filepath.Base(c)] = true
		}
	}
	return out
}

// PluginBinaries are the plugins' binary names, animus-<dir>, sorted.
func (r *Repo) PluginBinaries() []string {
	out := make([]string, len(r.Plugins))
	for i, p := range r.Plugins {
		out[i] = "animus-" + p
	}
	return out
}

// ruleLine matches a Makefile rule's target list: "a b: deps", not "x := y"
// or "x ?= y".
var ruleLine = regexp.MustCompile(`^([A-Za-z0-9_./%$() -]+?)\s*::?(?:[^=]|$)`)

// MakeTargets returns the explicit targets of the Makefile and each one's
// recipe (the tab-indented lines after it, continuation lines joined).
func MakeTargets(makefile string) map[string]string {
	targets := map[string]string{}
	var current []string
	sc := bufio.NewScanner(strings.NewReader(makefile))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "\t") {
			for _, t := range current {
				targets[t] += strings.TrimSpace(line) + "\n"
			}
			continue
		}
		current = nil
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		m := ruleLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, t := range strings.Fields(m[1]) {
			if strings.ContainsAny(t, "$%") || strings.HasPrefix(t, ".") {
				continue // pattern rules, variables and .PHONY-style specials
			}
			if _, ok := targets[t]; !ok {
				targets[t] = ""
			}
			current = append(current, t)
		}
	}
	for t, recipe := range targets {
		targets[t] = strings.ReplaceAll(recipe, "\\\n", " ")
	}
	return targets
}
