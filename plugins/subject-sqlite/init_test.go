package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/config"
)

// What initialize does with the database settings: an unusable path or a
// schema left behind fails it with the operator's next step, and a
// relative path lands under the bound project root.
func TestInit(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, tc := range []struct {
		name    string
		env     map[string]string
		ext     map[string]any
		wantErr string // message prefix; "" = initialized
		db      string // file that must exist after a successful initialize
	}{
		{"unopenable path", map[string]string{config.EnvDBPath: filepath.Join(notADir, "sub", "s.db")}, nil,
			"backend unavailable: cannot open the subject database; check " + config.EnvDBPath + " (the cause is in the plugin's log)", ""},
		{"schema behind without auto-migrate", map[string]string{config.EnvAutoMigrate: "false"}, nil,
			"backend unavailable: " + sqlitestore.ErrSchemaBehind.Error() + ": it is at version 0", ""},
		{"relative path under the bound project", map[string]string{config.EnvDBPath: "rel/s.db"},
			map[string]any{"project_binding": map[string]any{"project_root": root}}, "", filepath.Join(root, "rel", "s.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{config.EnvDBPath: filepath.Join(t.TempDir(), "subjects.db")}
			maps.Copy(env, tc.env)
			h := pluginkittest.Start(t, newPlugin(func(k string) string { return env[k] }))
			res, err := h.Initialize(tc.ext)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("initialize: %v", err)
				}
				h.OK(t, "task/create", map[string]any{"title": "stored"}, nil)
				if _, err := os.Stat(tc.db); err != nil {
					t.Errorf("database not at %s: %v", tc.db, err)
				}
				return
			}
			e, isRPC := pluginkittest.AsRPCError(err)
			if !isRPC || e.Code != -32603 || e.Category() != "unavailable" || !strings.HasPrefix(e.Message, tc.wantErr) {
				t.Fatalf("initialize: %s %v, want unavailable %q", res, err, tc.wantErr)
			}
			if strings.Contains(e.Message, notADir) {
				t.Errorf("the path leaked onto the wire: %s", e.Message)
			}
			// The plugin stays up and uninitialized.
			h.Fails(t, "task/list", nil, -32000, "")
		})
	}
}
