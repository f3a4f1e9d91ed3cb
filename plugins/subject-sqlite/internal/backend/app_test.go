package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/model"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/store"
)

var verbs = []string{"list", "get", "create", "update", "status", "next", "delete", "schema", "watch", "unwatch", "comments"}

// Every verb is served under each configured kind and under subject/, and
// initialize advertises exactly that, then health/check and the markers.
func TestMethodTable(t *testing.T) {
	h := newHost(t, twoKinds)
	var want []string
	for _, prefix := range []string{"task/", "issue/", "subject/"} {
		for _, v := range verbs {
			want = append(want, prefix+v)
		}
	}
	want = append(want, "health/check", "subject_kind:task", "subject_kind:issue")
	var res struct {
		Capabilities struct {
			Methods      []string `json:"methods"`
			SubjectKinds []string `json:"subject_kinds"`
		} `json:"capabilities"`
	}
	got, err := h.Initialize(nil)
	if err != nil || json.Unmarshal(got, &res) != nil {
		t.Fatalf("initialize: %s %v", got, err)
	}
	if !slices.Equal(res.Capabilities.Methods, want) || !slices.Equal(res.Capabilities.SubjectKinds, []string{"task", "issue"}) {
		t.Errorf("methods %v kinds %v\nwant %v", res.Capabilities.Methods, res.Capabilities.SubjectKinds, want)
	}
	// A kind this plugin does not serve is -32601, so the daemon moves on.
	h.Fails(t, "epic/get", map[string]any{"id": "epic:1"}, -32601, pluginkit.CategoryMethodNotFound)
}

func TestSchema(t *testing.T) {
	for _, tc := range []struct {
		name                string
		env                 map[string]string
		kinds, natives      []string
		hints               string
		methods             []string
		params              any
		emptyOmitsOptionals bool
	}{
		{"with hints", twoKinds, []string{"task", "issue"}, []string{"In Review"},
			`[{"native_status":"In Review","maps_to":"in-progress","dispatch_label":"code-review"}]`,
			[]string{"task/schema", "issue/schema", "subject/schema"}, map[string]any{"ignored": true}, false},
		{"defaults", nil, []string{"task"}, nil, "null", []string{"task/schema", "subject/schema"}, json.RawMessage(`[1]`), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, tc.env)
			for _, m := range tc.methods {
				var s schemaResult
				res := h.OK(t, m, tc.params, &s)
				if !slices.Equal(s.Kinds, tc.kinds) || !slices.Equal(s.StatusValues, model.Statuses) ||
					!s.SupportsWatch || !s.SupportsCreate || !s.SupportsPagination || !s.SupportsDelete ||
					!slices.Equal(s.NativeStatusValues, tc.natives) || !equalJSON(s.StatusDispatchHints, json.RawMessage(tc.hints)) {
					t.Errorf("%s: %s", m, res)
				}
				if tc.emptyOmitsOptionals && (strings.Contains(string(res), "native_status_values") || strings.Contains(string(res), "status_dispatch_hints")) {
					t.Errorf("%s: empty optional fields on the wire: %s", m, res)
				}
			}
		})
	}
}

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
			"backend unavailable: " + store.ErrSchemaBehind.Error() + ": it is at version 0", ""},
		{"relative path under the bound project", map[string]string{config.EnvDBPath: "rel/s.db"},
			map[string]any{"project_binding": map[string]any{"project_root": root}}, "", filepath.Join(root, "rel", "s.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, tc.env)
			res, err := h.Initialize(tc.ext)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("initialize: %v", err)
				}
				create(h, "task/create", map[string]any{"title": "stored"})
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

func TestHealth(t *testing.T) {
	ctx := context.Background()
	if r := New(config.Config{Kinds: []string{"task"}}).Health(ctx); r.Status != pluginkit.Degraded || !strings.Contains(r.LastError, "not initialized") {
		t.Errorf("health before initialize: %+v", r)
	}
	if err := New(config.Config{}).Close(ctx); err != nil {
		t.Errorf("Close before initialize: %v", err)
	}
	h := start(t, nil)
	type health struct {
		Status    string `json:"status"`
		LastError string `json:"last_error"`
	}
	if got := ok[health](h, "health/check", nil); got.Status != "healthy" || got.LastError != "" {
		t.Errorf("health: %+v", got)
	}
	// A database that stopped answering is unhealthy.
	if err := h.app.store.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ok[health](h, "health/check", nil); got.Status != "unhealthy" || !strings.HasPrefix(got.LastError, "database ping failed") {
		t.Errorf("health with the database closed: %+v", got)
	}
}

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
	st, err := store.Open(context.Background(), store.Options{Path: path})
	if err != nil {
		t.Fatalf("open without auto-migrate after migrate: %v", err)
	}
	st.Close()
}
