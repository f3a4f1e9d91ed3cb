package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// Step scenarios of DurableSuite: begin_step's resolution order, commit,
// abandon, and the errors they owe.

// durableFence replays the agent runner's model-call fence
// (durable.md §5) exactly: register the run, query, probe with begin_step
// and abandon it, reserve for real, commit; then a failed call; replays are
// served from query_run and begin_step; the daemon's shutdown ladder ends it.
func durableFence(p dProc, s *Session, dir string) error {
	const run, phase = "wf-1", "implement"
	if _, err := p.run(run, phase); err != nil {
		return err
	}
	if steps, err := p.query(run, phase); err != nil || len(steps) != 0 {
		return fmt.Errorf("fresh run: steps %v, %v", steps, err)
	}
	key0, key1 := "scope:wf-1:implement:0", "scope:wf-1:implement:1"
	probe, err := p.begin(stepParams(run, phase, "0", key0), "new")
	if err != nil {
		return err
	}
	if ack, err := p.abandon(probe.StepID); err != nil || !ack {
		return fmt.Errorf("abandoning the probe: ack %v, %v", ack, err)
	}
	real, err := p.begin(stepParams(run, phase, "0", key0), "new")
	if err != nil {
		return fmt.Errorf("after the probe was abandoned: %w", err)
	}
	if real.StepID == probe.StepID {
		return fmt.Errorf("the new reservation reused the abandoned step_id")
	}
	output := json.RawMessage(`{"content":[{"text":"hello","type":"text"}],"usage":{"input_tokens":12}}`)
	if err := p.commit(real.StepID, "success", output); err != nil {
		return err
	}
	failed, err := p.begin(stepParams(run, phase, "1", key1), "new")
	if err != nil {
		return err
	}
	if err := p.commit(failed.StepID, "error", map[string]string{"code": "STEP_FAILED", "message": "model timed out"}); err != nil {
		return err
	}
	steps, err := p.query(run, phase)
	if err != nil {
		return err
	}
	if len(steps) != 2 || steps[0].IdempotencyKey != key0 || steps[0].StepID != real.StepID || steps[0].Outcome != "success" ||
		!sameJSON(steps[0].Output, output) || steps[1].IdempotencyKey != key1 || steps[1].Outcome != "error" {
		return fmt.Errorf("query_run after two calls: %+v", steps)
	}
	replay, err := p.begin(stepParams(run, phase, "0", key0), "already_committed")
	if err != nil {
		return err
	}
	if replay.StepID != real.StepID || !sameJSON(replay.PriorOutput, output) {
		return fmt.Errorf("replay served %s %s", replay.StepID, replay.PriorOutput)
	}
	pe, err := p.begin(stepParams(run, phase, "1", key1), "prior_error")
	if err != nil {
		return err
	}
	if pe.PriorError == nil || pe.PriorError.Code != "STEP_FAILED" || pe.PriorError.Message != "model timed out" {
		return fmt.Errorf("prior_error %+v", pe.PriorError)
	}
	// End of the phase: the runner's host object goes through the daemon's
	// ladder; a store must exit by itself, having flushed.
	rep, err := p.h.Shutdown(p.ctx, fakehost.LadderDaemon)
	if err != nil {
		return err
	}
	if !rep.ExitedByItself || rep.ExitCode != 0 {
		return fmt.Errorf("shutdown ladder: exited by itself %v, code %d", rep.ExitedByItself, rep.ExitCode)
	}
	return nil
}

// durableResolution: a live reservation is reported to everyone
// else without being replaced; a committed error is terminal even after an
// abandon attempt.
func durableResolution(p dProc, s *Session, dir string) error {
	if _, err := p.run("r", "p"); err != nil {
		return err
	}
	first, err := p.begin(stepParams("r", "p", "a", "k-a"), "new")
	if err != nil {
		return err
	}
	for range 2 {
		again, err := p.begin(stepParams("r", "p", "a", "k-a"), "in_progress")
		if err != nil {
			return err
		}
		if again.StepID != first.StepID {
			return fmt.Errorf("in_progress names %s, the holder is %s", again.StepID, first.StepID)
		}
		if at, _ := time.Parse(time.RFC3339Nano, *again.ExpiresAt); !at.After(time.Now().Add(-time.Minute)) {
			return fmt.Errorf("reservation_expires_at %s is in the past", *again.ExpiresAt)
		}
	}
	if err := p.commit(first.StepID, "success", nil); err != nil {
		return fmt.Errorf("the holder could not commit after in_progress answers: %w", err)
	}
	done, err := p.begin(stepParams("r", "p", "a", "k-a"), "already_committed")
	if err != nil {
		return err
	}
	if done.StepID != first.StepID || len(done.PriorOutput) != 0 {
		return fmt.Errorf("already_committed %s with prior_output %s; want %s and no output", done.StepID, done.PriorOutput, first.StepID)
	}
	bad, err := p.begin(stepParams("r", "p", "b", "k-b"), "new")
	if err != nil {
		return err
	}
	if err := p.commit(bad.StepID, "error", map[string]any{"code": "E", "message": "m", "details": map[string]int{"attempt": 1}}); err != nil {
		return err
	}
	if ack, err := p.abandon(bad.StepID); err != nil || ack {
		return fmt.Errorf("abandon of a committed error: ack %v, %v (want false)", ack, err)
	}
	for range 2 {
		if _, err := p.begin(stepParams("r", "p", "b", "k-b"), "prior_error"); err != nil {
			return fmt.Errorf("a committed error must stay terminal: %w", err)
		}
	}
	return nil
}

// durableCommitTwice: a second commit of the same step is
// acknowledged and changes nothing.
func durableCommitTwice(p dProc, s *Session, dir string) error {
	if _, err := p.run("r", "p"); err != nil {
		return err
	}
	b, err := p.begin(stepParams("r", "p", "s", "k"), "new")
	if err != nil {
		return err
	}
	if err := p.commit(b.StepID, "success", map[string]int{"v": 1}); err != nil {
		return err
	}
	if err := p.commit(b.StepID, "success", map[string]int{"v": 2}); err != nil {
		return fmt.Errorf("retried commit: %w", err)
	}
	if err := p.commit(b.StepID, "error", map[string]string{"code": "X", "message": "late"}); err != nil {
		return fmt.Errorf("retried commit with another outcome: %w", err)
	}
	again, err := p.begin(stepParams("r", "p", "s", "k"), "already_committed")
	if err != nil {
		return err
	}
	if !sameJSON(again.PriorOutput, []byte(`{"v":1}`)) {
		return fmt.Errorf("the first outcome must win; served %s", again.PriorOutput)
	}
	steps, err := p.query("r", "p")
	if err != nil || len(steps) != 1 || steps[0].Outcome != "success" {
		return fmt.Errorf("query_run %+v, %v: want one success", steps, err)
	}
	return nil
}

// durableCommitErrors: outcome is validated before the step is
// looked up (-32307), an unknown step is -32302, a missing outcome is a
// params error.
func durableCommitErrors(p dProc, s *Session, dir string) error {
	if _, err := p.run("r", "p"); err != nil {
		return err
	}
	b, err := p.begin(stepParams("r", "p", "s", "k"), "new")
	if err != nil {
		return err
	}
	for _, tc := range []struct {
		params map[string]any
		code   int
	}{
		{map[string]any{"step_id": "step-never-issued", "outcome": "maybe"}, -32307},
		{map[string]any{"step_id": b.StepID, "outcome": "SUCCESS"}, -32307},
		{map[string]any{"step_id": b.StepID, "outcome": ""}, -32307},
		{map[string]any{"step_id": "step-never-issued", "outcome": "success"}, -32302},
		{map[string]any{"step_id": b.StepID}, -32602},
	} {
		if err := p.fails("durable/commit_step", tc.params, tc.code); err != nil {
			return err
		}
	}
	if _, err := p.begin(stepParams("r", "p", "s", "k"), "in_progress"); err != nil {
		return fmt.Errorf("a refused commit changed the step: %w", err)
	}
	return p.commit(b.StepID, "success", "fine")
}

// durableExpiry: after the TTL a key can be reserved again, which
// supersedes the old holder (-32303 on its commit); an expired reservation
// nobody took over still commits.
func durableExpiry(p dProc, s *Session, dir string) error {
	if _, err := p.run("r", "p"); err != nil {
		return err
	}
	short := func(name string) map[string]any {
		m := stepParams("r", "p", name, "k-"+name)
		m["reservation_ttl_secs"] = 1
		return m
	}
	a, err := p.begin(short("a"), "new")
	if err != nil {
		return err
	}
	b1, err := p.begin(short("b"), "new")
	if err != nil {
		return err
	}
	time.Sleep(1300 * time.Millisecond)
	b2, err := p.begin(stepParams("r", "p", "b", "k-b"), "new")
	if err != nil {
		return fmt.Errorf("an expired reservation must not block its key: %w", err)
	}
	if err := p.fails("durable/commit_step", map[string]any{"step_id": b1.StepID, "outcome": "success"}, -32303); err != nil {
		return fmt.Errorf("superseded holder: %w", err)
	}
	if err := p.commit(a.StepID, "success", "late but unique"); err != nil {
		return fmt.Errorf("expired, not superseded: %w", err)
	}
	if _, err := p.begin(stepParams("r", "p", "a", "k-a"), "already_committed"); err != nil {
		return err
	}
	return p.commit(b2.StepID, "success", "new holder")
}

// durableAbandon: abandon frees the key once; repeats, unknown and
// committed steps are not acknowledged (the crate also allows -32302 for an
// unknown step), and a commit survives an abandon.
func durableAbandon(p dProc, s *Session, dir string) error {
	if _, err := p.run("r", "p"); err != nil {
		return err
	}
	s1, err := p.begin(stepParams("r", "p", "s", "k"), "new")
	if err != nil {
		return err
	}
	for i, want := range []bool{true, false} {
		if ack, err := p.abandon(s1.StepID); err != nil || ack != want {
			return fmt.Errorf("abandon #%d: ack %v, %v; want %v", i+1, ack, err, want)
		}
	}
	resp, err := call(p.ctx, p.h, 10*time.Second, "durable/abandon_step", map[string]any{"step_id": "step-never-issued"})
	if err != nil {
		return err
	}
	if wantError(resp, -32302, "") != nil && (resp.Error != nil || strings.TrimSpace(string(resp.Result)) != `{"ack":false}`) {
		return fmt.Errorf("abandon of an unknown step: %s %+v, want {\"ack\":false} or -32302", resp.Result, resp.Error)
	}
	s2, err := p.begin(stepParams("r", "p", "s", "k"), "new")
	if err != nil {
		return fmt.Errorf("after abandon: %w", err)
	}
	if s2.StepID == s1.StepID {
		return fmt.Errorf("the new reservation reused step_id %s", s1.StepID)
	}
	if err := p.commit(s2.StepID, "success", 42); err != nil {
		return err
	}
	if ack, err := p.abandon(s2.StepID); err != nil || ack {
		return fmt.Errorf("abandon of a committed step: ack %v, %v", ack, err)
	}
	_, err = p.begin(stepParams("r", "p", "s", "k"), "already_committed")
	return err
}

// durableNondeterminism: one key, another step → -32306, before and
// after the commit, and the recorded step is untouched.
func durableNondeterminism(p dProc, s *Session, dir string) error {
	for _, r := range []string{"r", "r2"} {
		if _, err := p.run(r, "p"); err != nil {
			return err
		}
	}
	b, err := p.begin(stepParams("r", "p", "0", "scope:r:p:0"), "new")
	if err != nil {
		return err
	}
	for _, commit := range []bool{false, true} {
		if commit {
			if err := p.commit(b.StepID, "success", "x"); err != nil {
				return err
			}
		}
		for _, other := range []map[string]any{stepParams("r", "p", "1", "scope:r:p:0"), stepParams("r2", "p", "0", "scope:r:p:0")} {
			if err := p.fails("durable/begin_step", other, -32306); err != nil {
				return err
			}
		}
	}
	_, err = p.begin(stepParams("r", "p", "0", "scope:r:p:0"), "already_committed")
	return err
}

// durablePayloadLimit: an output one byte over max_payload_bytes is
// -32602 and stores nothing; one that fits commits.
func durablePayloadLimit(p dProc, s *Session, dir string) error {
	var extra struct {
		Max uint64 `json:"max_payload_bytes"`
	}
	if kc, ok := s.Init.KindCapabilities["durable_store"]; ok {
		_ = json.Unmarshal(kc.Extra, &extra)
	}
	if extra.Max == 0 || extra.Max > 6<<20 {
		return skipError(fmt.Sprintf("max_payload_bytes is %d: no limit this scenario can reach in one frame", extra.Max))
	}
	if _, err := p.run("r", "p"); err != nil {
		return err
	}
	b, err := p.begin(stepParams("r", "p", "s", "k"), "new")
	if err != nil {
		return err
	}
	over := json.RawMessage(`"` + strings.Repeat("x", int(extra.Max)-1) + `"`) // max+1 bytes of JSON
	if err := p.fails("durable/commit_step", map[string]any{"step_id": b.StepID, "outcome": "success", "output": over}, -32602); err != nil {
		return err
	}
	if _, err := p.begin(stepParams("r", "p", "s", "k"), "in_progress"); err != nil {
		return fmt.Errorf("a refused commit changed the step: %w", err)
	}
	fits := json.RawMessage(`"` + strings.Repeat("x", int(extra.Max)-2) + `"`)
	return p.commit(b.StepID, "success", fits)
}

// durableInvalidParams: malformed params are -32602 and the plugin
// keeps serving.
func durableInvalidParams(p dProc, s *Session, dir string) error {
	for _, tc := range []struct {
		method string
		params string
	}{
		{"durable/begin_workflow_run", `{}`},
		{"durable/begin_workflow_run", `{"run_id":1,"phase_id":"p"}`},
		{"durable/begin_step", `{"run_id":"r","phase_id":"p","step_name":"s"}`},
		{"durable/begin_step", `{"run_id":"r","phase_id":"p","step_name":"s","idempotency_key":"k","reservation_ttl_secs":-5}`},
		{"durable/commit_step", `{"outcome":"success"}`},
		{"durable/commit_step", `{"step_id":"s","outcome":"error","error":"not an object"}`},
		{"durable/abandon_step", `{}`},
		{"durable/recover_in_flight", `{}`},
		{"durable/recover_in_flight", `{"since_epoch":-1}`},
		{"durable/query_run", `{"run_id":"r"}`},
		{"durable/query_run", `[]`},
	} {
		if err := p.fails(tc.method, json.RawMessage(tc.params), -32602); err != nil {
			return err
		}
	}
	return stillServes(p.ctx, p.h)
}
