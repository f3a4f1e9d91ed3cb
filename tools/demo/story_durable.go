package demo

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// storyEffect is one side-effecting step of the review workflow: a Slack
// call made through the trigger plugin's outbound methods, so the fake
// Slack counts every time it really happens.
type storyEffect struct {
	name   string
	method string
	params map[string]string
}

type storyBegin struct {
	Status      string          `json:"status"`
	StepID      string          `json:"step_id"`
	PriorOutput json.RawMessage `json:"prior_output"`
}

// stepDurable runs the two steps through the durable store, kills the
// store's process, and replays the phase in a fresh one.
func (s *story) stepDurable() error {
	const bin = "animus-durable-sqlite"
	s.Step("3. Workflow %s runs two side-effecting steps through animus-durable-sqlite: begin_step (reserve) → Slack call → commit_step", storyWorkflow)
	if err := s.need(bin); err != nil {
		return err
	}
	effects := []storyEffect{
		{"post-review", "slack/chat_post_message", map[string]string{"channel": storyChannel, "thread_ts": s.mentionTS, "text": "Reviewed PR #42: two suggestions, no blockers."}},
		{"dm-author", "slack/send_dm", map[string]string{"user_id": storyAuthor, "text": "Your PR #42 is reviewed, see the thread in #eng."}},
	}
	key := func(e storyEffect) string {
		return fmt.Sprintf("%s:%s:%s:%s", fakehost.RepoScope(s.project), storyWorkflow, storyPhase, e.name)
	}
	begin := func(h *fakehost.Host, e storyEffect) (storyBegin, error) {
		var b storyBegin
		_, err := s.call(h, "durable/begin_step", map[string]string{"run_id": storyWorkflow, "phase_id": storyPhase, "step_name": e.name, "idempotency_key": key(e)}, &b)
		return b, err
	}

	h, err := s.durableProcess()
	if err != nil {
		return s.fail(bin, err)
	}
	var epoch1 struct{ Epoch uint64 }
	if _, err := s.call(h, "durable/begin_workflow_run", map[string]string{"run_id": storyWorkflow, "phase_id": storyPhase}, &epoch1); err != nil {
		return s.fail(bin, err)
	}
	s.res.EpochBefore = epoch1.Epoch
	committed := map[string]json.RawMessage{}
	for _, e := range effects {
		b, err := begin(h, e)
		if err != nil {
			return s.fail(bin, err)
		}
		s.res.FirstRun = append(s.res.FirstRun, b.Status)
		if b.Status != "new" {
			return s.fail(bin, fmt.Errorf("begin_step %s: %s on a fresh run", e.name, b.Status))
		}
		s.log("info", e.name, "reserved "+e.name, map[string]any{"step_id": b.StepID})
		var slack struct {
			Channel string `json:"channel"`
			TS      string `json:"ts"`
		}
		if _, err := s.call(s.trigger, e.method, e.params, &slack); err != nil {
			return s.fail("animus-trigger-slack", err)
		}
		out, _ := json.Marshal(slack)
		committed[e.name] = out
		if _, err := s.call(h, "durable/commit_step", map[string]any{"step_id": b.StepID, "outcome": "success", "output": json.RawMessage(out)}, nil); err != nil {
			return s.fail(bin, err)
		}
		s.log("info", e.name, fmt.Sprintf("%s done: Slack message %s in %s", e.name, slack.TS, slack.Channel), map[string]any{"step_id": b.StepID, "slack_ts": slack.TS})
		s.emit("workflow-step-committed", map[string]any{"workflow_id": storyWorkflow, "step": e.name, "step_id": b.StepID})
	}
	s.res.EffectsBefore = len(s.slack.Calls("chat.postMessage"))
	s.OK("both steps committed; the fake Slack saw %d chat.postMessage calls (the thread reply and the DM)", s.res.EffectsBefore)

	s.Say("Before the phase can finish, the machine hiccups: SIGKILL the durable store's process (pid %d)", h.Pid())
	if err := h.Kill(); err != nil {
		return s.fail(bin, err)
	}
	exited, code := h.Exited()
	s.res.KilledBySignal = exited && code == -1
	if err := s.Expect(s.res.KilledBySignal, "killed (exit code %d: a signal); the phase never finished", code); err != nil {
		return s.fail(bin, err)
	}
	s.log("warn", "runner", "durable store died (SIGKILL); replaying phase "+storyPhase, nil)

	s.Step("3b. The runner restarts the phase in a fresh process and replays it from the start")
	h2, err := s.durableProcess()
	if err != nil {
		return s.fail(bin, err)
	}
	var rec struct {
		InFlight []json.RawMessage `json:"in_flight"`
	}
	if _, err := s.call(h2, "durable/recover_in_flight", map[string]uint64{"since_epoch": 0}, &rec); err != nil {
		return s.fail(bin, err)
	}
	var epoch2 struct{ Epoch uint64 }
	if _, err := s.call(h2, "durable/begin_workflow_run", map[string]string{"run_id": storyWorkflow, "phase_id": storyPhase}, &epoch2); err != nil {
		return s.fail(bin, err)
	}
	s.res.Epoch2 = epoch2.Epoch
	s.res.ReplayOutputsMatch = true
	for _, e := range effects {
		b, err := begin(h2, e)
		if err != nil {
			return s.fail(bin, err)
		}
		s.res.Replay = append(s.res.Replay, b.Status)
		if b.Status == "new" {
			// A store that forgot the commit: the workflow would post again.
			// Do not; the expectation below reports it.
			s.res.ReplayOutputsMatch = false
			continue
		}
		s.res.ReplayOutputsMatch = s.res.ReplayOutputsMatch && jsonEqual(b.PriorOutput, committed[e.name])
		s.log("info", e.name, e.name+": already_committed, Slack call skipped (prior_output reused)", map[string]any{"step_id": b.StepID})
	}
	var run struct {
		Steps []struct {
			StepName string `json:"step_name"`
		} `json:"steps"`
	}
	if _, err := s.call(h2, "durable/query_run", map[string]string{"run_id": storyWorkflow, "phase_id": storyPhase}, &run); err != nil {
		return s.fail(bin, err)
	}
	for _, st := range run.Steps {
		s.res.CommittedSteps = append(s.res.CommittedSteps, st.StepName)
	}
	s.res.EffectsAfter = len(s.slack.Calls("chat.postMessage"))
	if err := s.Expect(s.res.KilledBySignal && slices.Equal(s.res.Replay, []string{"already_committed", "already_committed"}) && s.res.ReplayOutputsMatch &&
		s.res.EffectsAfter == s.res.EffectsBefore && len(rec.InFlight) == 0 && s.res.Epoch2 > s.res.EpochBefore,
		"replay: %v with the recorded outputs; Slack still saw %d posts (no second side effect); epoch %d → %d; query_run %v",
		s.res.Replay, s.res.EffectsAfter, s.res.EpochBefore, s.res.Epoch2, s.res.CommittedSteps); err != nil {
		return s.fail(bin, err)
	}
	rep, err := h2.Shutdown(s.ctx, fakehost.LadderDaemon)
	if err != nil {
		return s.fail(bin, err)
	}
	if !rep.ExitedByItself || rep.ExitCode != 0 {
		return s.fail(bin, fmt.Errorf("the replay process did not exit by itself (code %d)", rep.ExitCode))
	}
	s.emit("workflow-phase-replayed", map[string]any{"workflow_id": storyWorkflow, "phase_id": storyPhase, "already_committed": len(s.res.Replay)})
	s.record(bin, "2 steps reserved+committed, SIGKILL, replay → already_committed ×2, 0 repeated side effects")
	s.record("animus-trigger-slack", "posted the thread reply and the DM once")
	return nil
}

// durableProcess spawns the durable store as the agent runner does for a
// phase: cwd and project_binding = the project.
func (s *story) durableProcess() (*fakehost.Host, error) {
	h, err := s.Spawn(s.ctx, "animus-durable-sqlite", func(c *fakehost.Config) { c.Dir = s.project })
	if err != nil {
		return nil, err
	}
	if _, err := h.Initialize(s.ctx, fakehost.Handshake{Preset: fakehost.PresetDurableClient}); err != nil {
		return nil, err
	}
	_, s.seen[h] = h.WireLines(0)
	return h, nil
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
