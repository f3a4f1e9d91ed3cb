package compat

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// sharedDir is ../shared (or $ANIMUS_SHARED_DIR), where the spec and the
// reference notes live; the e2e tests need it for the schemas anyway.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := schemacheck.FindSharedDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSpecMethodsCoverSpecTable: every request the spec's §5 kind table
// lists for one of our kinds is in SpecMethods, so a method added to the
// spec shows up here before it can be missing from the matrix.
func TestSpecMethodsCoverSpecTable(t *testing.T) {
	spec := readFile(t, filepath.Join(sharedDir(t), "spec", "animus-plugin-protocol.md"))
	section := between(t, spec, "## 5. Plugin kinds", "## 6.")
	tick := regexp.MustCompile("`([^`]+)`")
	seen := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		kind := tick.FindStringSubmatch(cells[1])
		if kind == nil {
			continue
		}
		if !slices.ContainsFunc(Plugins(), func(p Plugin) bool { return p.Kind == kind[1] }) {
			continue // provider, workflow_runner, memory_store, custom: none of ours
		}
		seen[kind[1]] = true
		var have []string
		for _, m := range SpecMethods(kind[1]) {
			have = append(have, m.Method)
		}
		for _, piece := range strings.Split(cells[2], ",") {
			name := tick.FindStringSubmatch(piece)
			if name == nil || strings.Contains(piece, "(notification)") {
				continue
			}
			if !slices.Contains(have, name[1]) {
				t.Errorf("spec §5 lists %s for %s; SpecMethods(%q) lacks it", name[1], kind[1], kind[1])
			}
		}
	}
	for _, p := range Plugins() {
		if !seen[p.Kind] {
			t.Errorf("spec §5 has no row for %s (table format changed?)", p.Kind)
		}
	}
}

// TestSpecMethodsCoverQueueV2Gate: the six methods the 0.7 gate names in
// queue.md §8 are listed, so their refusal is in the matrix.
func TestSpecMethodsCoverQueueV2Gate(t *testing.T) {
	note := readFile(t, filepath.Join(sharedDir(t), "reference", "queue.md"))
	gate := between(t, note, "## 8.", "\n\nIf a 0.7 daemon")
	v2 := regexp.MustCompile("`(queue/v2/[a-z_/]+)`").FindAllStringSubmatch(gate, -1)
	if len(v2) < 6 {
		t.Fatalf("queue.md §8 names %d queue/v2 methods, want at least 6 (format changed?)", len(v2))
	}
	var have []string
	for _, m := range SpecMethods("queue") {
		have = append(have, m.Method)
	}
	for _, m := range v2 {
		if !slices.Contains(have, m[1]) {
			t.Errorf("queue.md §8 names %s; SpecMethods(queue) lacks it", m[1])
		}
	}
}

// TestRefsResolve: every section a SpecMethod or a reference-sourced
// Difference cites exists as a heading, so the citations stay true.
func TestRefsResolve(t *testing.T) {
	shared := sharedDir(t)
	var refs []string
	for _, p := range Plugins() {
		for _, m := range SpecMethods(p.Kind) {
			refs = append(refs, m.Ref)
		}
	}
	for _, d := range Differences() {
		if d.Source != SourceREADME {
			refs = append(refs, d.Source)
		}
	}
	slices.Sort(refs)
	for _, ref := range slices.Compact(refs) {
		file, sec, ok := strings.Cut(ref, " §")
		if !ok {
			t.Errorf("ref %q: want \"<file> §<section>\"", ref)
			continue
		}
		path := filepath.Join(shared, "reference", file)
		if file == "spec" {
			path = filepath.Join(shared, "spec", "animus-plugin-protocol.md")
		}
		heading := regexp.MustCompile(`(?m)^#{2,5} ` + regexp.QuoteMeta(sec) + `[. ]`)
		if !heading.MatchString(readFile(t, path)) {
			t.Errorf("ref %q: %s has no heading for section %s", ref, filepath.Base(path), sec)
		}
	}
}

func TestResolveSubjectKind(t *testing.T) {
	for _, tc := range []struct{ method, kind, want string }{
		{"{kind}/list", "task", "task/list"},
		{"{kind}/v2/list", "issue", "issue/v2/list"},
		{"subject/list", "task", "subject/list"},
	} {
		if got := (SpecMethod{Method: tc.method}).Resolve(tc.kind); got != tc.want {
			t.Errorf("Resolve(%q, %q) = %q, want %q", tc.method, tc.kind, got, tc.want)
		}
	}
}

// between returns the text from the first from up to the next to.
func between(t *testing.T, s, from, to string) string {
	t.Helper()
	i := strings.Index(s, from)
	if i < 0 {
		t.Fatalf("%q not found", from)
	}
	j := strings.Index(s[i+len(from):], to)
	if j < 0 {
		t.Fatalf("%q not found after %q", to, from)
	}
	return s[i : i+len(from)+j]
}
