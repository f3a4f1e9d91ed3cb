package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// durableScript walks animus-durable-sqlite through what the agent runner's
// model-call fence does, then crashes it: a model call is recorded once and
// replayed instead of re-run, a process killed mid-call loses nothing, the
// next process finds the unfinished call, and a failed call stays failed.
func durableScript() Script {
	return Script{
		Binary: "animus-durable-sqlite",
		Kind:   "durable_store",
		Title:  "animus-durable-sqlite: exactly-once model calls across a crash",
		Run:    runDurable,
	}
}

// durableSession is one bound plugin process of the demo. A transport
// failure is kept in err (the first one) and checked before each Expect,
// so the script reads as the runner's sequence of calls.
type durableSession struct {
	d   *Demo
	ctx context.Context
	h   *fakehost.Host
	err error
}

func (s *durableSession) call(method string, params, out any) *fakehost.Response {
	resp, err := s.d.Call(s.ctx, s.h, method, params)
	if err == nil && out != nil && resp.Error == nil {
		err = json.Unmarshal(resp.Result, out)
	}
	if err != nil {
		if s.err == nil {
			s.err = fmt.Errorf("%s: %w", method, err)
		}
		return &fakehost.Response{}
	}
	return resp
}

type demoBegin struct {
	Status      string          `json:"status"`
	StepID      string          `json:"step_id"`
	PriorOutput json.RawMessage `json:"prior_output"`
	ExpiresAt   string          `json:"reservation_expires_at"`
}

func runDurable(ctx context.Context, d *Demo) (string, error) {
	const run, phase = "wf-1", "implement"
	project, err := os.MkdirTemp("", "durable-demo-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(project)
	bin := "animus-durable-sqlite"
	key := func(i int) string { return fmt.Sprintf("demo-3fa9c1:wf-1:implement:%d", i) }
	step := func(i int) map[string]string {
		return map[string]string{"run_id": run, "phase_id": phase, "step_name": fmt.Sprint(i), "idempotency_key": key(i)}
	}

	d.Step("Discovery: `animus-durable-sqlite --manifest` with a scrubbed environment")
	m, err := fakehost.Probe(ctx, filepath.Join(d.BinDir, bin), fakehost.ProbeOptions{Schemas: d.Schemas})
	if err != nil {
		return "", err
	}
	if err := d.Expect(m.PluginKind == "durable_store", "durable_store, %d methods, configured by %v", len(m.Capabilities), m.EnvNames()); err != nil {
		return "", err
	}

	d.Step("Spawn as the agent runner does for one phase: project_binding in initialize, one long-lived process")
	h, err := d.Spawn(ctx, bin, func(c *fakehost.Config) { c.Dir = project })
	if err != nil {
		return "", err
	}
	res, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetDurableClient})
	d.Frames(h)
	if err != nil {
		return "", err
	}
	if err := d.Expect(res.PluginInfo.PluginKind == "durable_store", "kind_capabilities.durable_store: %s", res.KindCapabilities["durable_store"].Extra); err != nil {
		return "", err
	}
	a := &durableSession{d: d, ctx: ctx, h: h}
	var epoch1 struct{ Epoch uint64 }
	a.call("durable/begin_workflow_run", map[string]string{"run_id": run, "phase_id": phase}, &epoch1)

	d.Step("Model call 0: query, probe (new → abandon), reserve, call the model, commit")
	a.call("durable/query_run", map[string]string{"run_id": run, "phase_id": phase}, nil)
	var probe, real demoBegin
	a.call("durable/begin_step", step(0), &probe)
	a.call("durable/abandon_step", map[string]string{"step_id": probe.StepID, "reason": "step_query probe"}, nil)
	a.call("durable/begin_step", step(0), &real)
	reply := json.RawMessage(`{"content":"Refactor done; 3 files changed.","usage":{"input_tokens":1834,"output_tokens":212}}`)
	resp := a.call("durable/commit_step", map[string]any{"step_id": real.StepID, "outcome": "success", "output": reply}, nil)
	if a.err != nil {
		return "", a.err
	}
	if err := d.Expect(probe.Status == "new" && real.Status == "new" && resp.Error == nil, "recorded as %s", real.StepID); err != nil {
		return "", err
	}

	d.Step("A retried phase asks again: the committed reply is served, the model is not billed twice")
	var replay demoBegin
	a.call("durable/begin_step", step(0), &replay)
	if a.err != nil {
		return "", a.err
	}
	if err := d.Expect(replay.Status == "already_committed" && string(replay.PriorOutput) == string(reply), "already_committed, prior_output is the recorded reply"); err != nil {
		return "", err
	}

	d.Step("Model call 1 is reserved ... and the process is killed with SIGKILL mid-call")
	var inflight demoBegin
	a.call("durable/begin_step", step(1), &inflight)
	if a.err != nil {
		return "", a.err
	}
	if err := h.Kill(); err != nil {
		return "", err
	}
	if err := d.Expect(inflight.Status == "new", "killed holding %s", inflight.StepID); err != nil {
		return "", err
	}

	d.Step("After the restart: recover_in_flight{since_epoch:0} finds the unfinished call; the epoch continues")
	h2, err := d.Spawn(ctx, bin, func(c *fakehost.Config) { c.Dir = project })
	if err != nil {
		return "", err
	}
	if _, err := h2.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetDurableClient}); err != nil {
		return "", err
	}
	d.Frames(h2)
	b := &durableSession{d: d, ctx: ctx, h: h2}
	var rec struct {
		InFlight []struct {
			RunID             string `json:"run_id"`
			LastCommittedStep string `json:"last_committed_step"`
		} `json:"in_flight"`
	}
	b.call("durable/recover_in_flight", map[string]uint64{"since_epoch": 0}, &rec)
	var epoch2 struct{ Epoch uint64 }
	b.call("durable/begin_workflow_run", map[string]string{"run_id": run, "phase_id": phase}, &epoch2)
	if b.err != nil {
		return "", b.err
	}
	if err := d.Expect(len(rec.InFlight) == 1 && rec.InFlight[0].RunID == run && rec.InFlight[0].LastCommittedStep == "0" && epoch2.Epoch > epoch1.Epoch,
		"%s in flight after step 0; epoch %d → %d", run, epoch1.Epoch, epoch2.Epoch); err != nil {
		return "", err
	}

	d.Step("The dead holder's reservation still fences call 1; once released, the retry fails and that is final")
	var held, retry, final demoBegin
	b.call("durable/begin_step", step(1), &held)
	b.call("durable/abandon_step", map[string]string{"step_id": inflight.StepID, "reason": "holder died before the model call"}, nil)
	b.call("durable/begin_step", step(1), &retry)
	b.call("durable/commit_step", map[string]any{"step_id": retry.StepID, "outcome": "error", "error": map[string]string{"code": "STEP_FAILED", "message": "model timed out"}}, nil)
	b.call("durable/begin_step", step(1), &final)
	if b.err != nil {
		return "", b.err
	}
	if err := d.Expect(held.Status == "in_progress" && held.StepID == inflight.StepID && retry.Status == "new" && final.Status == "prior_error",
		"in_progress until %s, then new, then prior_error (terminal for the key)", held.ExpiresAt); err != nil {
		return "", err
	}

	d.Step("Errors name what is wrong, with the kind's codes")
	codes := []int{}
	for _, c := range []struct {
		method string
		params any
	}{
		{"durable/commit_step", map[string]string{"step_id": retry.StepID, "outcome": "maybe"}},
		{"durable/query_run", map[string]string{"run_id": "wf-unknown", "phase_id": phase}},
		{"durable/begin_step", map[string]string{"run_id": run, "phase_id": phase, "step_name": "7", "idempotency_key": key(0)}},
	} {
		resp := b.call(c.method, c.params, nil)
		if b.err != nil {
			return "", b.err
		}
		if err := d.Expect(resp.Error != nil, "%s → %s", c.method, errText(resp)); err != nil {
			return "", err
		}
		codes = append(codes, resp.Error.Code)
	}

	d.Step("The daemon's shutdown ladder at the end of the phase")
	rep, err := h2.Shutdown(ctx, fakehost.LadderDaemon)
	d.Frames(h2)
	if err != nil {
		return "", err
	}
	if err := d.Expect(rep.ExitedByItself && rep.ExitCode == 0, "exited by itself with code %d, %v after shutdown", rep.ExitCode, rep.Elapsed.Round(time.Millisecond)); err != nil {
		return "", err
	}
	return fmt.Sprintf("call 0 recorded once and replayed, SIGKILL mid-call 1, recovered after restart (epoch %d→%d), errors %v, clean exit",
		epoch1.Epoch, epoch2.Epoch, codes), nil
}
