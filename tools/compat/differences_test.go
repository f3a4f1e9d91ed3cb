package compat

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := binaries.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// pluginDirs lists the directories under plugins/.
func pluginDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(repoRoot(t), "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}

// TestEveryPluginIsInTheMatrix: a new directory under plugins/ fails here
// until it has a Plugins row, daemon lines and at least one differences
// entry; a row for a removed plugin fails too.
func TestEveryPluginIsInTheMatrix(t *testing.T) {
	dirs := pluginDirs(t)
	var rows []string
	for _, p := range Plugins() {
		rows = append(rows, p.Dir)
		if !slices.Contains(dirs, p.Dir) {
			t.Errorf("Plugins() lists %s, which is not a directory under plugins/", p.Dir)
		}
		if len(SpecMethods(p.Kind)) == 0 {
			t.Errorf("%s: no spec methods for kind %q", p.Dir, p.Kind)
		}
	}
	for _, dir := range dirs {
		if !slices.Contains(rows, dir) {
			t.Errorf("plugins/%s has no row in Plugins()", dir)
		}
		if len(DaemonLines(dir)) == 0 {
			t.Errorf("plugins/%s has no DaemonLines entry", dir)
		}
		if len(DifferencesOf(dir)) == 0 {
			t.Errorf("plugins/%s has no entry in the differences table", dir)
		}
	}
	for _, d := range Differences() {
		if !slices.Contains(dirs, d.Plugin) {
			t.Errorf("differences entry %q names plugin %s, which is not under plugins/", d.Match, d.Plugin)
		}
		if d.Difference == "" || d.Reason == "" || d.Match == "" {
			t.Errorf("%s entry %q: difference, reason and match are all required", d.Plugin, d.Match)
		}
	}
}

// TestDifferencesCoverREADMEs: every bullet and table row in a README's
// differences section has an entry, and every README entry's Match occurs
// in exactly one of those items. A README that grows a differences heading
// (logs-loki's, when it is written) fails here until the table follows.
func TestDifferencesCoverREADMEs(t *testing.T) {
	root := repoRoot(t)
	for _, dir := range pluginDirs(t) {
		t.Run(dir, func(t *testing.T) {
			var entries []Difference
			for _, d := range DifferencesOf(dir) {
				if d.Source == SourceREADME {
					entries = append(entries, d)
				}
			}
			b, err := os.ReadFile(filepath.Join(root, "plugins", dir, "README.md"))
			if os.IsNotExist(err) {
				if len(entries) > 0 {
					t.Errorf("%d entries cite plugins/%s/README.md, which does not exist", len(entries), dir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sections := differenceSections(string(b))
			if len(sections) == 0 && len(entries) > 0 {
				t.Errorf("%d entries cite the README, which has no differences heading", len(entries))
			}
			var items []string
			for _, s := range sections {
				if len(s.items) == 0 {
					t.Errorf("README section %q has no bullet or table row to check", s.heading)
				}
				items = append(items, s.items...)
			}
			for _, item := range items {
				if !slices.ContainsFunc(entries, func(d Difference) bool { return strings.Contains(item, d.Match) }) {
					t.Errorf("README difference has no entry in the compat table:\n  %s", item)
				}
			}
			for _, d := range entries {
				n := 0
				for _, item := range items {
					if strings.Contains(item, d.Match) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("entry Match %q occurs in %d README difference items, want exactly 1", d.Match, n)
				}
			}
		})
	}
}

// TestReferenceDifferencesQuoteTheirNote: an entry citing a reference note
// quotes text that is really there.
func TestReferenceDifferencesQuoteTheirNote(t *testing.T) {
	shared := sharedDir(t)
	for _, d := range Differences() {
		if d.Source == SourceREADME {
			continue
		}
		file, _, _ := strings.Cut(d.Source, " §")
		if !strings.Contains(readFile(t, filepath.Join(shared, "reference", file)), d.Match) {
			t.Errorf("%s entry: %q does not occur in %s", d.Plugin, d.Match, file)
		}
	}
}

// section is one differences section of a README.
type section struct {
	heading string
	items   []string // bullets (with their continuation lines) and table body rows
}

var differencesHeading = regexp.MustCompile(`(?i)^#{1,6}\s+.*\bdifferences?\b`)

// differenceSections finds the headings that mention differences and
// splits each section (up to the next heading outside a code fence) into
// items: top-level bullets with their indented continuation lines, and
// table rows other than the header and separator.
func differenceSections(readme string) []section {
	var out []section
	var cur *section
	fence, tableRow := false, 0
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(line, "#") {
			cur = nil
			if differencesHeading.MatchString(line) {
				out = append(out, section{heading: strings.TrimSpace(strings.TrimLeft(line, "#"))})
				cur = &out[len(out)-1]
			}
			continue
		}
		if cur == nil || fence {
			continue
		}
		switch {
		case strings.HasPrefix(line, "|"):
			tableRow++
			if tableRow > 1 && !regexp.MustCompile(`^\|[\s:|-]+$`).MatchString(line) {
				cur.items = append(cur.items, line)
			}
		case strings.HasPrefix(line, "* ") || strings.HasPrefix(line, "- "):
			tableRow = 0
			cur.items = append(cur.items, line)
		case strings.HasPrefix(line, "  ") && len(cur.items) > 0 && tableRow == 0:
			cur.items[len(cur.items)-1] += " " + strings.TrimSpace(line)
		default:
			tableRow = 0
		}
	}
	return out
}

func TestDifferenceSectionsParser(t *testing.T) {
	for _, tc := range []struct {
		name   string
		readme string
		want   []string
	}{
		{"bullets with continuation", "## x\n### Differences from the reference\n\nIntro.\n\n* one\n  more\n- two\n\n### Next\n* not this",
			[]string{"* one more", "- two"}},
		{"table without header and separator", "### Differences\n| | ref | ours |\n|---|---|---|\n| a | b | c |\n| d | e | f |\n\nAfter.\n",
			[]string{"| a | b | c |", "| d | e | f |"}},
		{"fenced heading does not end the section", "### Differences\n```\n# comment\n```\n* kept\n",
			[]string{"* kept"}},
		{"no differences heading", "### Guarantees\n* a\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range differenceSections(tc.readme) {
				got = append(got, s.items...)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("items = %q, want %q", got, tc.want)
			}
		})
	}
}
