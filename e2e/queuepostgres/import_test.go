package queuepostgres

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// host is one daemon's view of a queue: a binary, a project root on its
// machine, the environment, one process per call (the 0.7 daemon's queue
// client).
type host struct {
	t      *testing.T
	binary string
	dir    string
	env    map[string]string
}

func (h host) call(method string, params any) *fakehost.Response {
	h.t.Helper()
	p := e2etest.Spawn(h.t, h.binary, e2etest.Options{Dir: h.dir, EnvMode: fakehost.EnvDaemonNarrow, Env: h.env,
		Daemon: fakehost.Daemon07, Handshake: fakehost.Handshake{Preset: fakehost.PresetQueueClient}})
	resp := e2etest.Request(h.t, p, method, params)
	e2etest.Shutdown(h.t, p, fakehost.LadderDaemon)
	return resp
}

// result is call's result, failing the test on an error reply.
func (h host) result(method string, params any) json.RawMessage {
	h.t.Helper()
	resp := h.call(method, params)
	if resp.Error != nil {
		h.t.Fatalf("%s %s: %s answered %d %s", h.binary, method, method, resp.Error.Code, resp.Error.Message)
	}
	return resp.Result
}

func v2Add(task, key string) map[string]any {
	p := map[string]any{"subject_dispatch": map[string]any{"requested_at": "2026-10-01T12:00:00Z",
		"subject": map[string]any{"Task": map[string]any{"id": "task:" + task}}, "trigger_source": "import-test", "workflow_ref": "standard"}}
	if key != "" {
		p["idempotency_key"] = key
	}
	return p
}

// importQueue runs `animus-queue-postgres import --from-sqlite file` with
// env and returns its exit code, stdout and stderr.
func importQueue(t *testing.T, env map[string]string, file string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binaries.Path(t, binaryName), "import", "--from-sqlite", file)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// An operator moving from one host to several: a queue built by
// animus-queue-sqlite (ticketed and old-style entries, a finished ticket,
// an idempotency key, a held entry) is imported into an empty namespace;
// animus-queue-postgres then lists exactly what animus-queue-sqlite
// listed, honours the imported key and generations, and a second import
// is refused without changing anything.
func TestImportFromSQLite(t *testing.T) {
	q := pgns.Queue.New(t)
	old := host{t: t, binary: sqliteName, dir: e2etest.Project(t), env: map[string]string{}}
	old.result("queue/v2/enqueue", v2Add("DONE", ""))
	lease := e2etest.Decode[struct {
		Leased []struct{ Execution json.RawMessage } `json:"leased"`
	}](t, old.result("queue/v2/lease", map[string]any{"max": 1, "owner_id": "old-host", "workflow_ids": []string{"wf-1"}}))
	if len(lease.Leased) != 1 {
		t.Fatalf("sqlite lease: %+v", lease)
	}
	old.result("queue/v2/completion", map[string]any{"execution": lease.Leased[0].Execution, "status": "completed"})
	keyed := e2etest.Decode[struct {
		EntryID string `json:"entry_id"`
	}](t, old.result("queue/v2/enqueue", v2Add("KEYED", "delivery-1")))
	old.result("queue/v2/enqueue", v2Add("OTHER", ""))
	legacy := e2etest.Decode[struct {
		EntryID string `json:"entry_id"`
	}](t, old.result("queue/enqueue", map[string]any{"subject_dispatch": map[string]any{"requested_at": "2026-10-01T12:00:00Z",
		"subject": map[string]any{"Task": map[string]any{"id": "LEGACY-1"}}, "trigger_source": "import-test", "workflow_ref": "standard"}}))
	old.result("queue/hold", map[string]any{"entry_id": legacy.EntryID})
	wantList := old.result("queue/list", map[string]any{})

	file := filepath.Join(old.dir, ".animus", "queue.sqlite")
	env := q.Map(nil)
	code, stdout, stderr := importQueue(t, env, file)
	if code != 0 || !strings.Contains(stdout, "3 live entries, 1 finished") {
		t.Fatalf("import: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}

	next := host{t: t, binary: binaryName, dir: e2etest.Project(t), env: env}
	if got := next.result("queue/list", map[string]any{}); !bytes.Equal(got, wantList) {
		t.Errorf("queue/list after the import differs\n got %s\nwant %s", got, wantList)
	}
	replay := e2etest.Decode[struct {
		EntryID  string `json:"entry_id"`
		Enqueued bool   `json:"enqueued"`
	}](t, next.result("queue/v2/enqueue", v2Add("KEYED", "delivery-1")))
	if replay.EntryID != keyed.EntryID || replay.Enqueued {
		t.Errorf("the imported idempotency key: %+v, want entry %s not enqueued again", replay, keyed.EntryID)
	}
	again := e2etest.Decode[struct {
		Subject struct {
			Generation uint64 `json:"generation"`
		} `json:"subject"`
	}](t, next.result("queue/v2/enqueue", v2Add("DONE", "")))
	if again.Subject.Generation != 2 {
		t.Errorf("a finished subject enqueued again got generation %d, want 2 (its history was imported)", again.Subject.Generation)
	}

	before := next.result("queue/list", map[string]any{})
	code, stdout, stderr = importQueue(t, env, file)
	if code != 1 || !strings.Contains(stderr, "already holds queue data") {
		t.Errorf("second import: exit %d, stdout %q, stderr %q; want exit 1 saying the namespace already holds queue data", code, stdout, stderr)
	}
	if after := next.result("queue/list", map[string]any{}); !bytes.Equal(after, before) {
		t.Errorf("a refused import changed the queue\nbefore %s\n after %s", before, after)
	}
}
