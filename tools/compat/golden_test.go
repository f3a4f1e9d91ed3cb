package compat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// TestCommittedMatrixIsCurrent regenerates the matrix from the built
// binaries and compares it with docs/COMPATIBILITY.md, ignoring only the
// version line: a change in what a binary serves, refuses or passes, or in
// the package's tables, fails here until `make compat` is run. Without the
// binaries, or without the PostgreSQL cluster of scripts/postgres.sh run
// (the animus-queue-postgres and animus-durable-postgres rows), it skips (locally) or fails (CI=true,
// where `make e2e` has just built them under that cluster).
func TestCommittedMatrixIsCurrent(t *testing.T) {
	root := repoRoot(t)
	binDir := os.Getenv(binaries.EnvBinDir)
	if binDir == "" {
		binDir = filepath.Join(root, "bin")
	}
	var missing []string
	for _, p := range Plugins() {
		if _, err := os.Stat(filepath.Join(binDir, p.Binary())); err != nil {
			missing = append(missing, p.Binary())
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("%s lacks %s; the matrix is generated from the binaries: run `make build`", binDir, strings.Join(missing, ", "))
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg + " (with CI=true this is a failure)")
	}
	if os.Getenv(envPGTestDSN) == "" {
		// The animus-queue-postgres and animus-durable-postgres rows are
		// measured against a real cluster (pgUpstream), as make e2e provides.
		msg := "no $" + envPGTestDSN + ": the animus-queue-postgres and animus-durable-postgres rows need PostgreSQL; run via scripts/postgres.sh run -- …"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg + " (with CI=true this is a failure)")
	}
	schemas, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var log bytes.Buffer
	m, err := Generate(ctx, Options{BinDir: binDir, Schemas: schemas, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, r := range m.Rows {
		if r.Error != "" {
			t.Errorf("%s could not be measured: %s", r.Plugin.Binary(), r.Error)
		}
	}
	var got bytes.Buffer
	if err := Render(&got, m); err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join(root, "docs", "COMPATIBILITY.md")
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatalf("%v: run `make compat` and commit the result", err)
	}
	if diff := lineDiff(Normalize(string(want)), Normalize(got.String())); diff != "" {
		t.Errorf("docs/COMPATIBILITY.md is stale: run `make compat` and commit it.\n--- committed\n+++ regenerated\n%s\nrunner log:\n%s", diff, log.String())
	}
}

// lineDiff lists the lines that differ, position by position after the
// common prefix and suffix: enough to see what changed in a generated file.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	if pre == len(al) && pre == len(bl) {
		return ""
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	var out strings.Builder
	fmt.Fprintf(&out, "@@ line %d\n", pre+1)
	for _, l := range al[pre : len(al)-suf] {
		out.WriteString("-" + l + "\n")
	}
	for _, l := range bl[pre : len(bl)-suf] {
		out.WriteString("+" + l + "\n")
	}
	return out.String()
}

func TestLineDiff(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"x\ny\nz", "x\ny\nz", ""},
		{"x\ny\nz", "x\nY\nz", "@@ line 2\n-y\n+Y\n"},
		{"x\nz", "x\ny\nz", "@@ line 2\n+y\n"},
	} {
		if got := lineDiff(tc.a, tc.b); got != tc.want {
			t.Errorf("lineDiff(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
