package queue

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

var allParams = map[string]string{
	"queue/enqueue": dispatch7, "queue/list": "", "queue/lease": `{"max":1}`, "queue/stats": "",
	"queue/next_deadline": "{}", "queue/hold": `{"entry_id":"x"}`, "queue/release": `{"entry_id":"x"}`,
	"queue/release_pending": `{"entry_id":"x","reason":"r"}`, "queue/drop": `{"entry_id":"x"}`,
	"queue/reorder": `{"entry_ids":["x"]}`, "queue/mark_assigned": `{"entry_id":"x"}`,
	"queue/completion": `{"entry_id":"x","status":"completed"}`,
}

// Without a project binding initialize succeeds and touches nothing; every
// domain call then answers -32207.
func TestUnbound(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for i, hs := range []pluginkittest.Handshake{
		{ProtocolVersion: "1.0.0"}, // no init_extensions at all
		{InitExtensions: json.RawMessage(`{"project_binding":null,"other":{}}`)},
	} {
		f := &fixture{t: t, s: New(testConfig{}.options(t, Options{})), dir: dir}
		if err := f.serve(hs); err != nil {
			t.Fatalf("unbound initialize #%d: %v", i, err)
		}
		if h := f.s.Health(context.Background()); h.Status != pluginkit.Healthy {
			t.Errorf("unbound health %+v", h)
		}
		for method, params := range allParams {
			f.wantErr(method, params, CodeProjectBinding, "init_extensions.project_binding is required", nil)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("an unbound process created %v", ents)
	}
}

func TestBindingErrors(t *testing.T) {
	tests := []struct{ binding, want string }{
		{`"x"`, "must be an object"},
		{`{}`, "project_root must be a string"},
		{`{"project_root":5}`, "project_root must be a string"},
		{`{"project_root":""}`, "project_root must be a string"},
		{`{"project_root":"relative/dir"}`, "must be an absolute path"},
	}
	for _, tt := range tests {
		err := (&fixture{t: t, s: New(testConfig{}.options(t, Options{}))}).serve(bound(tt.binding))
		checkErr(t, err, CodeProjectBinding, tt.want, map[string]any{"category": "invalid_request"})
	}
}

func TestMissingProjectRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "gone")
	f := &fixture{t: t, s: New(testConfig{}.options(t, Options{}))}
	if err := f.serve(bound(rootBinding(root))); err != nil {
		t.Fatal(err)
	}
	f.wantErr("queue/stats", "", CodeProjectBinding, "does not exist", nil)
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("the missing project root was created: %v", err)
	}
	if h := f.s.Health(context.Background()); h.Status != pluginkit.Unhealthy || !strings.Contains(h.LastError, "does not exist") {
		t.Errorf("health %+v", h)
	}
}

func TestConfiguredDBPath(t *testing.T) {
	sqliteOnly(t, "the configured SQLite file path")
	f := newFixture(t, testConfig{DBPath: "state/q.db"})
	f.enqueue("TASK-1", "")
	if _, err := os.Stat(filepath.Join(f.dir, "state", "q.db")); err != nil {
		t.Errorf("configured path not used: %v", err)
	}
	if _, err := os.Stat(f.dbPath()); !os.IsNotExist(err) {
		t.Errorf("default path created too: %v", err)
	}
}

// A writer in another process holding the lock past the busy timeout makes
// mutations answer -32205; reads still work (WAL) and nothing is changed.
func TestBusyTimeoutAnswers32205(t *testing.T) {
	sqliteOnly(t, "SQLite busy timeout behind another writer's file lock (pgstore tests the lock timeout)")
	f := newFixture(t, testConfig{BusyTimeout: 60 * time.Millisecond})
	id := f.enqueue("TASK-1", "")
	other, err := sqlitestore.Open(context.Background(), sqlitestore.Options{Path: f.dbPath(), BusyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	held, stop, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- other.Update(context.Background(), func(tx storage.Store) error {
			// Any write takes the lock for the rest of the transaction.
			if err := tx.SetOrdinal(context.Background(), id, 1); err != nil {
				return err
			}
			close(held)
			<-stop
			return nil
		})
	}()
	<-held
	for _, m := range []string{"queue/enqueue", "queue/lease", "queue/hold", "queue/next_deadline", "queue/reorder"} {
		p := allParams[m]
		if m == "queue/hold" {
			p = `{"entry_id":"` + id + `"}`
		}
		f.wantErr(m, p, CodeLockFailed, "queue lock acquisition failed", nil)
	}
	f.want("queue/stats", "", `{"assigned":0,"deferred":0,"held":0,"pending":1,"total":1}`)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := f.states(); got != id+":pending" {
		t.Errorf("queue after busy calls: %s", got)
	}
	f.want("queue/hold", `{"entry_id":"`+id+`"}`, `{"changed":true,"not_found":false}`)
}

func TestKindCapabilities(t *testing.T) {
	b, err := json.Marshal(KindCapabilities())
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"queue":{"crate_version":"0.4.0","extra":{"generation_fenced_leases_v1":true,"max_lease_batch":5,"priority_weighted":false}}}`; string(b) != want {
		t.Errorf("kind_capabilities %s, want %s", b, want)
	}
	mux := pluginkit.NewMux()
	New(testConfig{}.options(t, Options{})).Register(mux)
	want := "queue/enqueue queue/list queue/lease queue/stats queue/next_deadline queue/hold queue/release " +
		"queue/release_pending queue/drop queue/reorder queue/mark_assigned queue/completion " +
		"queue/v2/enqueue queue/v2/lease queue/v2/lease/renew queue/v2/lease/recover queue/v2/completion queue/v2/release_pending"
	if got := strings.Join(mux.Methods(), " "); got != want {
		t.Errorf("methods %s", got)
	}
}

func TestAuditTrailOfALifecycle(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.enqueue("TASK-1", "")
	f.h.OK(t, "queue/hold", `{"entry_id":"id-1","reason":"operator"}`, nil)
	f.h.OK(t, "queue/release", `{"entry_id":"id-1"}`, nil)
	f.h.OK(t, "queue/lease", `{"max":1,"workflow_ids":["wf"]}`, nil)
	f.h.OK(t, "queue/release_pending", `{"entry_id":"id-1","reason":"spawn-deferred"}`, nil)
	f.h.OK(t, "queue/mark_assigned", `{"entry_id":"id-1","workflow_id":"wf2"}`, nil)
	f.h.OK(t, "queue/completion", `{"entry_id":"id-1","status":"failed"}`, nil)
	want := []string{
		"id-1 queue/enqueue ->pending",
		"id-1 queue/hold pending>held operator",
		"id-1 queue/release held>pending",
		"id-1 queue/lease pending>assigned",
		"id-1 queue/release_pending assigned>pending spawn-deferred",
		"id-1 queue/mark_assigned pending>assigned",
		"id-1 queue/completion assigned>failed",
	}
	if got := f.audit(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
