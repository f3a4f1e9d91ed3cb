package queuesqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// TestManifestDeclaresEnv: every variable the plugin reads is in
// env_required, or the daemon would scrub it.
func TestManifestDeclaresEnv(t *testing.T) {
	names := e2etest.Declared(t, binaryName)
	for _, want := range []string{"ANIMUS_QUEUE_DB_PATH", "ANIMUS_QUEUE_BUSY_TIMEOUT_MS", "ANIMUS_QUEUE_LEASE_TTL_SECS", "ANIMUS_QUEUE_AUDIT_RETENTION_DAYS"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("env_required lacks %s: %v", want, names)
		}
	}
}

// TestBusyTimeoutAnswers32205: another process holds the write lock past
// ANIMUS_QUEUE_BUSY_TIMEOUT_MS; mutations answer -32205 and change
// nothing, reads still answer, and the next call after the lock is gone
// succeeds.
func TestBusyTimeoutAnswers32205(t *testing.T) {
	p := newProject(t)
	id := entryID(t, p.result("queue/enqueue", dispatch("TASK-1")))
	p.env["ANIMUS_QUEUE_BUSY_TIMEOUT_MS"] = "200"
	db := p.openDB()
	held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- db.Tx(context.Background(), func(tx *sql.Tx) error {
			if _, err := tx.Exec(`UPDATE entries SET ordinal = ordinal`); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	for _, c := range []struct {
		method string
		params json.RawMessage
	}{
		{"queue/enqueue", dispatch("TASK-2")},
		{"queue/lease", raw(`{"max":1}`)},
		{"queue/hold", raw(`{"entry_id":"` + id + `"}`)},
	} {
		start := time.Now()
		resp := p.call(c.method, c.params)
		if resp.Error == nil || resp.Error.Code != -32205 || !strings.Contains(resp.Error.Message, "queue lock acquisition failed") {
			t.Errorf("%s while locked: %s", c.method, resp.Raw)
		}
		if d := time.Since(start); d < 200*time.Millisecond {
			t.Errorf("%s gave up after %v, before the busy timeout", c.method, d)
		}
	}
	if got := p.result("queue/stats", raw(`{}`)); got != `{"assigned":0,"deferred":0,"held":0,"pending":1,"total":1}` {
		t.Errorf("stats while locked: %s", got)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := p.result("queue/hold", raw(`{"entry_id":"`+id+`"}`)); got != `{"changed":true,"not_found":false}` {
		t.Errorf("hold after the lock is gone: %s", got)
	}
}

// TestConfiguredDBPath: ANIMUS_QUEUE_DB_PATH (relative to the project root)
// moves the database.
func TestConfiguredDBPath(t *testing.T) {
	p := newProject(t)
	p.env["ANIMUS_QUEUE_DB_PATH"] = "state/queue.db"
	p.result("queue/enqueue", dispatch("TASK-1"))
	if _, err := os.Stat(filepath.Join(p.dir, "state", "queue.db")); err != nil {
		t.Errorf("configured database missing: %v", err)
	}
	if _, err := os.Stat(p.dbPath()); !os.IsNotExist(err) {
		t.Errorf("default database created as well: %v", err)
	}
}

// TestLeaseTTL: with ANIMUS_QUEUE_LEASE_TTL_SECS an assigned entry whose
// lease ran out is leased again with a new workflow id.
func TestLeaseTTL(t *testing.T) {
	p := newProject(t)
	p.env["ANIMUS_QUEUE_LEASE_TTL_SECS"] = "1"
	id := entryID(t, p.result("queue/enqueue", dispatch("TASK-1")))
	if got := p.result("queue/lease", raw(`{"max":1,"workflow_ids":["first"]}`)); !strings.Contains(got, id) {
		t.Fatalf("first lease: %s", got)
	}
	if got := p.result("queue/lease", raw(`{"max":1,"workflow_ids":["early"]}`)); got != `{"leased":[]}` {
		t.Errorf("lease before the TTL ran out: %s", got)
	}
	time.Sleep(1100 * time.Millisecond)
	got := p.result("queue/lease", raw(`{"max":1,"workflow_ids":["second"]}`))
	if !strings.Contains(got, id) || !strings.Contains(got, `"workflow_id":"second"`) {
		t.Errorf("lease after the TTL: %s", got)
	}
}

// TestBadConfigFailsAtStart: a malformed variable stops the process before
// the handshake, naming the variable on stderr. (ANIMUS_QUEUE_LEASE_TTL_SECS
// is the exception since queue 0.4.0: like the reference it falls back to
// its default, so the busy timeout stands in for it here.)
func TestBadConfigFailsAtStart(t *testing.T) {
	h, err := fakehost.Start(context.Background(), e2etest.Config(t, binaryName, e2etest.Options{
		EnvMode: fakehost.EnvDaemonNarrow, Env: map[string]string{"ANIMUS_QUEUE_BUSY_TIMEOUT_MS": "soon"},
		Declared: e2etest.Declared(t, binaryName),
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	exited, code := h.Wait(10 * time.Second)
	if !exited || code != 1 || !strings.Contains(h.Stderr(), "ANIMUS_QUEUE_BUSY_TIMEOUT_MS") {
		t.Errorf("exited %v code %d stderr %q", exited, code, h.Stderr())
	}
}
