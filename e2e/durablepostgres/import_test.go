package durablepostgres

import (
	"bytes"
	"context"
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

// importLog runs `animus-durable-postgres import --from-sqlite file` with
// env and returns its exit code and output.
func importLog(t *testing.T, env map[string]string, file string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binaries.Path(t, binaryName), "import", "--from-sqlite", file)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// An operator moving workflows to several hosts: a step log written by
// animus-durable-sqlite (a committed step, an open reservation) is
// imported into an empty namespace; animus-durable-postgres then answers
// query_run and recover_in_flight byte for byte as animus-durable-sqlite
// did, serves the committed outcome back, continues the epochs, and a
// second import is refused without changing anything.
func TestImportFromSQLite(t *testing.T) {
	dir := e2etest.Project(t)
	old := e2etest.Spawn(t, sqliteName, e2etest.Options{Dir: dir, Handshake: fakehost.Handshake{Preset: fakehost.PresetDurableClient}})
	epoch := e2etest.Decode[struct{ Epoch uint64 }](t, e2etest.Call(t, old, "durable/begin_workflow_run", map[string]string{"run_id": "wf", "phase_id": "build"}))
	done := e2etest.Decode[beginResult](t, e2etest.Call(t, old, "durable/begin_step", stepParams("wf", "build", "compile", "k-done")))
	e2etest.Call(t, old, "durable/commit_step", map[string]any{"step_id": done.StepID, "outcome": "success", "output": map[string]int{"artifacts": 3}})
	e2etest.Call(t, old, "durable/begin_step", stepParams("wf", "build", "upload", "k-open"))
	wantQuery := e2etest.Call(t, old, "durable/query_run", map[string]string{"run_id": "wf", "phase_id": "build"})
	wantRecover := e2etest.Call(t, old, "durable/recover_in_flight", map[string]uint64{"since_epoch": 0})
	e2etest.Shutdown(t, old, fakehost.LadderDaemon)

	s := pgns.Durable.New(t)
	file := filepath.Join(dir, ".animus", "durable.sqlite")
	if code, out := importLog(t, s.Map(nil), file); code != 0 || !strings.Contains(out, "1 runs, 2 steps") {
		t.Fatalf("import: exit %d: %s", code, out)
	}
	next := newHost(t, "host-b", s, nil, nil).start()
	if got := e2etest.Call(t, next.h, "durable/query_run", map[string]string{"run_id": "wf", "phase_id": "build"}); !bytes.Equal(got, wantQuery) {
		t.Errorf("query_run after the import\n got %s\nwant %s", got, wantQuery)
	}
	if got := e2etest.Call(t, next.h, "durable/recover_in_flight", map[string]uint64{"since_epoch": 0}); !bytes.Equal(got, wantRecover) {
		t.Errorf("recover_in_flight after the import\n got %s\nwant %s", got, wantRecover)
	}
	replay := e2etest.Decode[beginResult](t, e2etest.Call(t, next.h, "durable/begin_step", stepParams("wf", "build", "compile", "k-done")))
	if replay.Status != "already_committed" || replay.StepID != done.StepID || string(replay.PriorOutput) != `{"artifacts":3}` {
		t.Errorf("the imported commit: %+v", replay)
	}
	if e := next.beginRun("wf-2", "build"); e <= epoch.Epoch {
		t.Errorf("epoch after the import %d, want above the imported %d", e, epoch.Epoch)
	}

	before := e2etest.Call(t, next.h, "durable/recover_in_flight", map[string]uint64{"since_epoch": 0})
	if code, out := importLog(t, s.Map(nil), file); code != 1 || !strings.Contains(out, "already holds") {
		t.Errorf("second import: exit %d: %s; want exit 1 refusing a namespace that holds data", code, out)
	}
	if after := e2etest.Call(t, next.h, "durable/recover_in_flight", map[string]uint64{"since_epoch": 0}); !bytes.Equal(after, before) {
		t.Errorf("a refused import changed the log\nbefore %s\n after %s", before, after)
	}
}
