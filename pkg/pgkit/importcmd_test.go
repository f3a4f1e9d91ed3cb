package pgkit

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImportCommand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "q.sqlite")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nope.sqlite")
	for _, tc := range []struct {
		name           string
		args           []string
		runErr         error
		code           int
		stdout, stderr string // substrings; "" = must be empty
		ran            bool
	}{
		{"no flag", nil, nil, 2, "", "usage: animus-x-postgres import --from-sqlite FILE [--project DIR]", false},
		{"stray argument", []string{"--from-sqlite", file, "more"}, nil, 2, "", "usage:", false},
		{"unknown flag", []string{"--from", file}, nil, 2, "", "flag provided but not defined", false},
		{"missing file", []string{"--from-sqlite", missing}, nil, 1, "", "animus-x-postgres import: no thing database at " + missing, false},
		{"copy fails", []string{"--from-sqlite", file}, errors.New("namespace not empty"), 1, "", "animus-x-postgres import: namespace not empty", true},
		{"copied", []string{"--from-sqlite", file, "--project", "/p"}, nil, 0, "imported " + file + " (project /p)", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			var project *string
			ran := false
			code := Import{
				Binary: "animus-x-postgres", What: "thing", FileHelp: "the file",
				Flags: func(fs *flag.FlagSet) string {
					project = fs.String("project", "", "project root")
					return " [--project DIR]"
				},
				Run: func(_ context.Context, from string) (string, error) {
					ran = true
					return "imported " + from + " (project " + *project + ")", tc.runErr
				},
			}.Main(context.Background(), tc.args, &stdout, &stderr)
			for _, c := range []struct{ got, want string }{{stdout.String(), tc.stdout}, {stderr.String(), tc.stderr}} {
				if (c.want == "") != (c.got == "") || !strings.Contains(c.got, c.want) {
					t.Errorf("output %q, want %q", c.got, c.want)
				}
			}
			if code != tc.code || ran != tc.ran {
				t.Errorf("exit %d ran %v, want %d %v", code, ran, tc.code, tc.ran)
			}
		})
	}
}
