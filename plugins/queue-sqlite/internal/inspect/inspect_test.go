package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/plugins/queue-sqlite/internal/config"
)

// seed writes a queue through the store: one pending, one assigned entry,
// and their audit rows.
func seed(t *testing.T, path string) {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), sqlitestore.Options{Path: path, BusyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	wf := "wf-9"
	err = st.Update(ctx, func(tx storage.Store) error {
		for _, e := range []*storage.Entry{
			{ID: "e-1", State: "pending", SubjectKey: "TASK-1", WorkflowRef: "standard", EnqueuedAt: "2026-06-14T12:00:00+00:00",
				Dispatch: []byte(`{"requested_at":"2026-06-14T11:00:00Z","subject":{"Task":{"id":"TASK-1"}},"trigger_source":"t","workflow_ref":"standard"}`)},
			{ID: "e-2", State: "assigned", SubjectKey: "gh::7", WorkflowRef: "quick-fix", WorkflowID: &wf, EnqueuedAt: "2026-06-14T12:00:01+00:00",
				Dispatch: []byte(`{"requested_at":"2026-06-14T11:00:00Z","subject":{"id":"7","kind":"gh"},"trigger_source":"t","workflow_ref":"quick-fix"}`)},
		} {
			if err := tx.Insert(ctx, e); err != nil {
				return err
			}
			if err := tx.Record(ctx, storage.Audit{EntryID: e.ID, SubjectKey: e.SubjectKey, At: e.EnqueuedAt, AtNS: 1, Method: "queue/enqueue", To: "pending"}); err != nil {
				return err
			}
		}
		from, reason := "pending", "because"
		return tx.Record(ctx, storage.Audit{EntryID: "e-2", SubjectKey: "gh::7", At: "2026-06-14T12:00:02+00:00", AtNS: 2,
			Method: "queue/lease", From: &from, To: "assigned", WorkflowID: &wf, Reason: &reason})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func run(args []string, env map[string]string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, func(k string) string { return env[k] }, &out, &errb)
	return code, out.String(), errb.String()
}

func TestInspectTables(t *testing.T) {
	project := t.TempDir()
	seed(t, filepath.Join(project, ".animus", "queue.sqlite"))
	code, out, errOut := run([]string{"--project", project}, nil)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"total 2: pending 1 (deferred 0), assigned 1, held 0",
		"POS", "e-1", "TASK-1", "standard", "e-2", "gh::7", "quick-fix", "wf-9",
		"audit trail (all entries, last 3, oldest first)",
		"pending → assigned", "because",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Queue order: e-1 before e-2.
	if strings.Index(out, "e-1") > strings.Index(out, "e-2") {
		t.Errorf("entries out of order:\n%s", out)
	}
}

func TestInspectJSON(t *testing.T) {
	project := t.TempDir()
	db := filepath.Join(project, "custom.db")
	seed(t, db)
	// The configured path is honoured like the plugin does, relative to the project.
	code, out, errOut := run([]string{"--project", project, "--json", "--entry", "e-2", "--audit", "5"}, map[string]string{config.EnvDBPath: "custom.db"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if rep.Database != db || rep.Stats.Total != 2 || len(rep.Entries) != 2 || rep.Entries[1].EntryID != "e-2" ||
		rep.Entries[1].WorkflowID == nil || *rep.Entries[1].WorkflowID != "wf-9" {
		t.Errorf("report %+v", rep)
	}
	if len(rep.Audit) != 2 || rep.Audit[0].EntryID != "e-2" || rep.Audit[1].To != "assigned" || *rep.Audit[1].Reason != "because" {
		t.Errorf("audit %+v", rep.Audit)
	}
}

func TestInspectErrors(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		args []string
		env  map[string]string
		code int
		msg  string
	}{
		{nil, nil, 2, "usage"},
		{[]string{"--project"}, nil, 2, "flag needs an argument"},
		{[]string{"--project", empty, "extra"}, nil, 2, "usage"},
		{[]string{"--project", empty, "--audit", "-1"}, nil, 2, "usage"},
		{[]string{"--project", empty}, nil, 1, "no queue database at"},
		{[]string{"--project", empty}, map[string]string{config.EnvBusyTimeoutMS: "x"}, 2, config.EnvBusyTimeoutMS},
	}
	for _, tt := range tests {
		code, _, errOut := run(tt.args, tt.env)
		if code != tt.code || !strings.Contains(errOut, tt.msg) {
			t.Errorf("inspect %v: exit %d %q, want %d containing %q", tt.args, code, errOut, tt.code, tt.msg)
		}
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("inspect created files: %v", ents)
	}
}
