package queuesqlite

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

const binaryName = "animus-queue-sqlite"

// project is a project root the test's plugin processes share.
type project struct {
	t   *testing.T
	dir string
	env map[string]string // the daemon's environment overlay
	// declared is env_required as the manifest probe reported it: the
	// daemon probes at discovery, not before every spawn.
	declared []string
	// quiet makes call check that each process wrote nothing to stderr at
	// the default log level (the daemon logs every stderr line at WARN).
	quiet bool
}

func newProject(t *testing.T) *project {
	t.Helper()
	return &project{t: t, dir: e2etest.Project(t), env: map[string]string{}, declared: e2etest.Declared(t, binaryName)}
}

func (p *project) dbPath() string { return filepath.Join(p.dir, ".animus", "queue.sqlite") }

// spawn starts a process the way the daemon's queue client does (narrow
// allowlist, env_required, cwd = project root) and completes the handshake.
func (p *project) spawn() *fakehost.Host {
	p.t.Helper()
	return e2etest.Spawn(p.t, binaryName, e2etest.Options{Dir: p.dir, EnvMode: fakehost.EnvDaemonNarrow, Env: p.env,
		Declared: p.declared, Handshake: fakehost.Handshake{Preset: fakehost.PresetQueueClient}})
}

// call is one daemon queue call: fresh process, handshake, the method,
// shutdown and exit. The process must exit by itself with code 0.
func (p *project) call(method string, params any) *fakehost.Response {
	p.t.Helper()
	return p.once(p.spawn(), method, params)
}

// once sends method on h, a process just spawned for it, then runs the
// shutdown ladder (and the stderr check when quiet).
func (p *project) once(h *fakehost.Host, method string, params any) *fakehost.Response {
	p.t.Helper()
	resp := e2etest.Request(p.t, h, method, params)
	e2etest.Shutdown(p.t, h, fakehost.LadderDaemon)
	if p.quiet {
		quietStderr(p.t, h)
	}
	return resp
}

// result is call that must succeed; it returns the result bytes.
func (p *project) result(method string, params any) string {
	p.t.Helper()
	resp := p.call(method, params)
	if resp.Error != nil {
		p.t.Fatalf("%s: error %d %s", method, resp.Error.Code, resp.Error.Message)
	}
	return string(resp.Result)
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// dispatch is an enqueue's params for a legacy task subject.
func dispatch(task string) json.RawMessage {
	return raw(`{"subject_dispatch":{"requested_at":"2026-06-14T12:00:00.123456Z","subject":{"Task":{"id":"` + task +
		`"}},"trigger_source":"manual-queue-enqueue","workflow_ref":"standard"}}`)
}

// openDB opens the project's queue file directly (the assertions read
// SQLite, not the plugin).
func (p *project) openDB() *sqlitex.DB {
	p.t.Helper()
	db, err := sqlitex.Open(context.Background(), sqlitex.Options{Path: p.dbPath(), BusyTimeout: 5 * time.Second})
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { db.Close() })
	return db
}

func entryID(t *testing.T, result string) string {
	t.Helper()
	var r struct {
		EntryID string `json:"entry_id"`
	}
	if err := json.Unmarshal([]byte(result), &r); err != nil || r.EntryID == "" {
		t.Fatalf("no entry_id in %s", result)
	}
	return r.EntryID
}

func quietStderr(t *testing.T, h *fakehost.Host) {
	t.Helper()
	if s := strings.TrimSpace(h.Stderr()); s != "" {
		t.Errorf("stderr is not quiet at the default log level:\n%s", s)
	}
}
