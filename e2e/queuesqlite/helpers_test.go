package queuesqlite

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

const binaryName = "animus-queue-sqlite"

// declared is env_required as the manifest probe reports it, learned once:
// the daemon probes at discovery, not before every spawn.
var declared = sync.OnceValues(func() ([]string, error) {
	bin, err := binaries.Find(binaryName)
	if err != nil {
		return nil, err
	}
	m, err := fakehost.Probe(context.Background(), bin, fakehost.ProbeOptions{})
	if err != nil {
		return nil, err
	}
	return m.EnvNames(), nil
})

// project is a project root the test's plugin processes share.
type project struct {
	t   *testing.T
	dir string
	env map[string]string // the daemon's environment overlay
	// quiet makes call check that each process wrote nothing to stderr at
	// the default log level (the daemon logs every stderr line at WARN).
	quiet bool
}

func newProject(t *testing.T) *project {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &project{t: t, dir: dir, env: map[string]string{}}
}

func (p *project) dbPath() string { return filepath.Join(p.dir, ".animus", "queue.sqlite") }

// spawn starts a process the way the daemon's queue client does (narrow
// allowlist, env_required, cwd = project root) and completes the handshake.
func (p *project) spawn(ctx context.Context) *fakehost.Host {
	p.t.Helper()
	names, err := declared()
	if err != nil {
		p.t.Fatal(err)
	}
	schemas, err := schemacheck.Default()
	if err != nil {
		p.t.Fatal(err)
	}
	h := fakehost.New(p.t, fakehost.Config{
		Binary: binaries.Path(p.t, binaryName), Dir: p.dir, EnvMode: fakehost.EnvDaemonNarrow,
		Env: p.env, Declared: names, Schemas: schemas,
	})
	if _, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetQueueClient}); err != nil {
		p.t.Fatal(err)
	}
	return h
}

// call is one daemon queue call: fresh process, handshake, the method,
// shutdown and exit. The process must exit by itself with code 0.
func (p *project) call(method string, params any) *fakehost.Response {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := p.spawn(ctx)
	resp, err := h.Call(ctx, method, params)
	if err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	rep, err := h.Shutdown(ctx, fakehost.LadderDaemon)
	if err != nil || !rep.ExitedByItself || rep.ExitCode != 0 {
		p.t.Fatalf("after %s: shutdown %+v, %v", method, rep, err)
	}
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
