package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// queueScript plays the daemon, the CLI and an operator against
// animus-queue-sqlite, one fresh process per queue call as the daemon runs
// it: enqueue (and a duplicate), a deferred entry, the dispatch tick's
// lease, the two completion reconcilers, the unbound health handshake, and
// the inspect command.
func queueScript() Script {
	return Script{
		Binary: "animus-queue-sqlite",
		Kind:   "queue",
		Title:  "animus-queue-sqlite: a SQLite dispatch queue, one process per call",
		Run:    runQueue,
	}
}

// queueDemo is the state of one queue session.
type queueDemo struct {
	*Demo
	bin, dir string
	declared []string
	calls    int
	// gated applies the 0.7 daemon's gate to the initialize result of
	// every queue/v2 call before the method is sent, as the daemon does
	// (queue-v2.md §4.1).
	gated bool
}

func runQueue(ctx context.Context, d *Demo) (string, error) {
	q := &queueDemo{Demo: d, bin: filepath.Join(d.BinDir, "animus-queue-sqlite")}
	d.Step("Discovery: `animus-queue-sqlite --manifest` with a scrubbed environment")
	m, err := fakehost.Probe(ctx, q.bin, fakehost.ProbeOptions{Schemas: d.Schemas})
	if err != nil {
		return "", err
	}
	q.declared = m.EnvNames()
	if err := d.Expect(m.PluginKind == "queue", "plugin_kind %s, %d methods, env_required %v", m.PluginKind, len(m.Capabilities), q.declared); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "demo-queue-project-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	q.dir, _ = filepath.EvalSymlinks(dir)
	d.Say("Every call below is its own process, as the daemon runs a queue: initialize (with project_binding) →")
	d.Say("initialized → one method → shutdown → exit. Only the method's frames are shown.")

	d.Step("CLI: `animus queue enqueue TASK-7`, twice (0.3.2 never dedupes: the second answer carries a warning)")
	r1, err := q.call(ctx, "queue/enqueue", queueDemoDispatch("TASK-7", ""))
	if err != nil {
		return "", err
	}
	r2, err := q.call(ctx, "queue/enqueue", queueDemoDispatch("TASK-7", ""))
	if err != nil {
		return "", err
	}
	if err := d.Expect(r1.Error == nil && r2.Error == nil && strings.Contains(string(r2.Result), "duplicate enqueued"),
		"two entries for TASK-7, the second with a warning"); err != nil {
		return "", err
	}

	d.Step("A deferred entry: a Linear issue scheduled an hour from now")
	runAt := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r, err := q.call(ctx, "queue/enqueue", queueDemoDispatch(`{"kind":"linear.issue","id":"ENG-7","title":"Fix login"}`, `,"run_at":"`+runAt+`"`))
	if err != nil {
		return "", err
	}
	if err := d.Expect(r.Error == nil && strings.Contains(string(r.Result), `"subject_id":"linear.issue::ENG-7"`), "subject_id is the subject key"); err != nil {
		return "", err
	}
	r, err = q.call(ctx, "queue/next_deadline", json.RawMessage(`{}`))
	if err != nil {
		return "", err
	}
	if err := d.Expect(r.Error == nil && strings.Contains(string(r.Result), "next_run_at"), "the daemon learns when to wake up: %s", r.Result); err != nil {
		return "", err
	}

	d.Step("Daemon tick: lease up to 2 with its own workflow ids; one entry per subject per batch, deferred ones wait")
	r, err = q.call(ctx, "queue/lease", json.RawMessage(`{"max":2,"workflow_ids":["wf-run-1","wf-run-2"]}`))
	if err != nil {
		return "", err
	}
	var lease struct {
		Leased []struct {
			EntryID    string `json:"entry_id"`
			SubjectID  string `json:"subject_id"`
			WorkflowID string `json:"workflow_id"`
		} `json:"leased"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &lease) != nil || len(lease.Leased) != 1 || lease.Leased[0].WorkflowID != "wf-run-1" {
		return "", d.Expect(false, "lease: %s", r.Raw)
	}
	entry := lease.Leased[0].EntryID
	d.OK("leased %s (%s) as wf-run-1; the second TASK-7 and the deferred ENG-7 stay pending", entry, lease.Leased[0].SubjectID)

	d.Step("The workflow finished: both reconcilers complete it; the second finds nothing and that is not an error")
	if _, err := q.call(ctx, "queue/list", json.RawMessage(`{"status":["assigned"]}`)); err != nil {
		return "", err
	}
	c1, err := q.call(ctx, "queue/completion", json.RawMessage(`{"entry_id":"`+entry+`","status":"completed","workflow_id":"wf-run-1","workflow_ref":"standard"}`))
	if err != nil {
		return "", err
	}
	c2, err := q.call(ctx, "queue/completion", json.RawMessage(`{"entry_id":"`+entry+`","status":"completed","workflow_ref":"standard"}`))
	if err != nil {
		return "", err
	}
	if err := d.Expect(string(c1.Result) == `{"changed":true,"not_found":false}` && string(c2.Result) == `{"changed":false,"not_found":true}`,
		"completed once; the late duplicate answers not_found:true"); err != nil {
		return "", err
	}

	d.Step("The daemon's generic health handshake sends no project binding: initialize succeeds, touches nothing, queue calls answer -32207")
	unbound, err := q.unbound(ctx)
	if err != nil {
		return "", err
	}
	if err := d.Expect(unbound.Error != nil && unbound.Error.Code == -32207, "%s", errText(unbound)); err != nil {
		return "", err
	}

	d.Step("Operator: `animus-queue-sqlite inspect --project DIR` prints the queue and its audit trail")
	out, err := exec.CommandContext(ctx, q.bin, "inspect", "--project", q.dir, "--audit", "6").CombinedOutput()
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		d.Say("%s", d.shorten(line))
	}
	if err := d.Expect(err == nil && strings.Contains(string(out), "assigned → completed"), "inspect shows 2 pending entries and every transition"); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d calls in %d processes: enqueue, duplicate warning, deferral, lease, completion ×2, -32207 unbound, inspect", q.calls, q.calls), nil
}

// call runs one queue call in a fresh process bound to the project.
func (q *queueDemo) call(ctx context.Context, method string, params any) (*fakehost.Response, error) {
	h, err := q.Spawn(ctx, "animus-queue-sqlite", func(c *fakehost.Config) {
		c.Dir, c.Declared, c.EnvMode = q.dir, q.declared, fakehost.EnvDaemonNarrow
	})
	if err != nil {
		return nil, err
	}
	res, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetQueueClient})
	if err != nil {
		return nil, err
	}
	if q.gated && strings.HasPrefix(method, "queue/v2/") {
		if _, err := conformance.RequireGenerationFencedQueue(res); err != nil {
			return nil, fmt.Errorf("%s not sent: %w", method, err)
		}
	}
	_, q.seen[h] = h.WireLines(0) // show the method's frames only
	q.calls++
	resp, err := q.Call(ctx, h, method, params)
	if err != nil {
		return nil, err
	}
	rep, err := h.Shutdown(ctx, fakehost.LadderDaemon)
	if err != nil {
		return nil, err
	}
	if !rep.ExitedByItself || rep.ExitCode != 0 {
		return nil, fmt.Errorf("%s: the process did not exit by itself after shutdown/exit", method)
	}
	return resp, nil
}

// unbound runs queue/stats after the generic handshake, which carries no
// project_binding, in an empty directory.
func (q *queueDemo) unbound(ctx context.Context) (*fakehost.Response, error) {
	h, err := q.Spawn(ctx, "animus-queue-sqlite", func(c *fakehost.Config) { c.Declared = q.declared })
	if err != nil {
		return nil, err
	}
	if _, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}); err != nil {
		return nil, err
	}
	_, q.seen[h] = h.WireLines(0)
	q.calls++
	resp, err := q.Call(ctx, h, "queue/stats", json.RawMessage(`{}`))
	if err != nil {
		return nil, err
	}
	if ents, _ := os.ReadDir(h.Dir()); len(ents) != 0 {
		return nil, fmt.Errorf("the unbound process created files in its cwd")
	}
	_, err = h.Shutdown(ctx, fakehost.LadderDaemon)
	return resp, err
}

func queueDemoDispatch(subject, extra string) json.RawMessage {
	if !strings.HasPrefix(subject, "{") {
		subject = `{"Task":{"id":"` + subject + `"}}`
	}
	return json.RawMessage(`{"subject_dispatch":{"requested_at":"` + time.Now().UTC().Format(time.RFC3339) + `","subject":` + subject +
		`,"trigger_source":"manual-queue-enqueue","workflow_ref":"standard"}` + extra + `}`)
}
