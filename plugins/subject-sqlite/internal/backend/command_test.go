package backend

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/config"
)

func TestMigrateCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.db")
	blocked := filepath.Join(dir, "file")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var to string
	for _, tc := range []struct {
		name     string
		cfg      config.Config
		cfgErr   error
		code     int
		stdout   string // regexp
		stderr   string // prefix
		sameVers bool   // from == to
	}{
		{"bad configuration", config.Config{DBPath: path}, errors.New("ANIMUS_SQLITE_KINDS: bad"), 1, `^$`, "invalid configuration: ANIMUS_SQLITE_KINDS: bad", false},
		{"fresh database", config.Config{DBPath: path}, nil, 0, `^` + regexp.QuoteMeta(path) + `: schema version 0 -> ([1-9][0-9]*)\n$`, "", false},
		{"already current", config.Config{DBPath: path}, nil, 0, `^` + regexp.QuoteMeta(path) + `: schema version ([0-9]+) -> ([0-9]+)\n$`, "", true},
		{"unopenable", config.Config{DBPath: filepath.Join(blocked, "x", "m.db")}, nil, 1, `^$`, "migrate: ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := MigrateCommand(tc.cfg, tc.cfgErr, &stdout, &stderr).Run(context.Background(), nil)
			m := regexp.MustCompile(tc.stdout).FindStringSubmatch(stdout.String())
			if code != tc.code || m == nil || !strings.HasPrefix(stderr.String(), tc.stderr) {
				t.Fatalf("exit %d stdout %q stderr %q", code, stdout.String(), stderr.String())
			}
			switch {
			case len(m) == 2:
				to = m[1]
			case tc.sameVers && (m[1] != to || m[2] != to):
				t.Errorf("second run %q, want %s -> %s", stdout.String(), to, to)
			}
		})
	}
	// The migrated file opens where auto-migration is off.
	st, err := sqlitestore.Open(context.Background(), sqlitestore.Options{Path: path})
	if err != nil {
		t.Fatalf("open without auto-migrate after migrate: %v", err)
	}
	st.Close()
}
