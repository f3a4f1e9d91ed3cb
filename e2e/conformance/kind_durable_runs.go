package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// Run scenarios of DurableSuite: query_run, recover_in_flight, the backend
// failing, a SIGKILL, and several processes on one project.

// durableQueryRun: committed steps of that (run_id, phase_id) only, in
// commit order (not begin order), errors included, reservations excluded;
// an unknown pair is -32301, for begin_step too.
func durableQueryRun(p dProc, s *Session, dir string) error {
	for _, phase := range []string{"p", "other"} {
		if _, err := p.run("r", phase); err != nil {
			return err
		}
	}
	ids := map[string]string{}
	for _, name := range []string{"a", "b", "c", "d"} {
		b, err := p.begin(stepParams("r", "p", name, "k-"+name), "new")
		if err != nil {
			return err
		}
		ids[name] = b.StepID
	}
	x, err := p.begin(stepParams("r", "other", "a", "k-x"), "new")
	if err != nil {
		return err
	}
	for _, c := range []struct{ id, outcome string }{
		{ids["c"], "success"}, {x.StepID, "success"}, {ids["a"], "error"}, {ids["b"], "success"},
	} {
		payload := any("out-" + c.id)
		if c.outcome == "error" {
			payload = map[string]string{"code": "E", "message": "m"}
		}
		if err := p.commit(c.id, c.outcome, payload); err != nil {
			return err
		}
	}
	steps, err := p.query("r", "p")
	if err != nil {
		return err
	}
	want := []string{"c", "a", "b"}
	if len(steps) != len(want) {
		return fmt.Errorf("query_run: %d steps %+v, want c, a, b (d is only reserved; k-x is another phase)", len(steps), steps)
	}
	var prev time.Time
	for i, name := range want {
		st := steps[i]
		if st.StepID != ids[name] || st.StepName != name || st.IdempotencyKey != "k-"+name {
			return fmt.Errorf("query_run step %d: %+v, want %s", i, st, name)
		}
		at, err := time.Parse(time.RFC3339Nano, st.CommittedAt)
		if err != nil || at.Before(prev) {
			return fmt.Errorf("committed_at %q (%v) out of order", st.CommittedAt, err)
		}
		prev = at
	}
	if steps[1].Outcome != "error" || steps[0].Outcome != "success" {
		return fmt.Errorf("outcomes %s, %s", steps[0].Outcome, steps[1].Outcome)
	}
	for _, pair := range [][2]string{{"r", "unknown-phase"}, {"unknown-run", "p"}} {
		if err := p.fails("durable/query_run", map[string]any{"run_id": pair[0], "phase_id": pair[1]}, -32301); err != nil {
			return err
		}
	}
	return p.fails("durable/begin_step", stepParams("unknown-run", "p", "s", "k-unknown"), -32301)
}

// durableRecover: runs with outstanding reservations and an epoch above the
// cursor, in epoch order, with last_committed_step; a re-registered run
// moves to its new epoch; runs without reservations never appear.
func durableRecover(p dProc, s *Session, dir string) error {
	epoch := map[string]uint64{}
	for _, r := range []string{"busy", "done", "quiet", "later"} {
		e, err := p.run(r, "p")
		if err != nil {
			return err
		}
		epoch[r] = e
	}
	for _, st := range []struct {
		run, name, then string
	}{
		{"busy", "one", "commit"}, {"busy", "two", ""}, {"done", "one", "commit"},
		{"quiet", "one", "abandon"}, {"later", "one", ""},
	} {
		b, err := p.begin(stepParams(st.run, "p", st.name, st.run+"-"+st.name), "new")
		if err != nil {
			return err
		}
		switch st.then {
		case "commit":
			err = p.commit(b.StepID, "success", st.name)
		case "abandon":
			_, err = p.abandon(b.StepID)
		}
		if err != nil {
			return err
		}
	}
	check := func(since uint64, want ...string) error {
		got, err := p.recover(since)
		if err != nil {
			return err
		}
		if len(got) != len(want) {
			return fmt.Errorf("recover_in_flight since %d: %+v, want runs %v", since, got, want)
		}
		for i, w := range want {
			if got[i].RunID != w || got[i].PhaseID != "p" {
				return fmt.Errorf("recover_in_flight since %d: run %d is %s/%s, want %s/p", since, i, got[i].RunID, got[i].PhaseID, w)
			}
			last := got[i].LastCommittedStep
			if (w == "busy") != (last != nil && *last == "one") {
				return fmt.Errorf("recover_in_flight: %s has last_committed_step %v", w, last)
			}
		}
		return nil
	}
	if err := check(0, "busy", "later"); err != nil {
		return err
	}
	if err := check(epoch["busy"], "later"); err != nil {
		return err
	}
	e, err := p.run("busy", "p") // a retried workflow re-registers: new epoch, same reservations
	if err != nil {
		return err
	}
	if err := check(0, "later", "busy"); err != nil {
		return fmt.Errorf("after busy was re-registered (epoch order): %w", err)
	}
	return check(e)
}

// scenarioDurableBackendDown: when the store cannot be reached the methods
// answer -32304 and the process keeps serving. For a file-backed plugin
// <root>/.animus is a regular file, so nothing can be created under it;
// for one whose store lives elsewhere, Target.Unreachable points it at an
// address nothing answers at. A file-backed plugin that keeps no state
// under the root skips.
func scenarioDurableBackendDown(ctx context.Context, s *Session) Outcome {
	dir, err := s.TempDir()
	if err != nil {
		return failf("%v", err)
	}
	var mutate []func(*fakehost.Config)
	if s.Unreachable != nil {
		mutate = append(mutate, func(c *fakehost.Config) { c.Env = overlay(c.Env, s.Unreachable) })
	} else if err := os.WriteFile(filepath.Join(dir, ".animus"), []byte("not a directory\n"), 0o600); err != nil {
		return failf("%v", err)
	}
	h, _, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetDurableClient},
		append(mutate, func(c *fakehost.Config) { c.Dir = dir })...)
	if err != nil {
		return failf("%v", err)
	}
	p := dProc{ctx, h}
	resp, err := call(ctx, p.h, 10*time.Second, "durable/begin_workflow_run", map[string]any{"run_id": "r", "phase_id": "p"})
	if err != nil {
		return failf("%v", err)
	}
	if resp.Error == nil {
		return skipf("the plugin does not keep its state under <project_root>/.animus")
	}
	if err := wantError(resp, -32304, ""); err != nil {
		return failf("%v", err)
	}
	if err := p.fails("durable/recover_in_flight", map[string]any{"since_epoch": 0}, -32304); err != nil {
		return failf("%v", err)
	}
	if err := stillServes(ctx, p.h); err != nil {
		return failf("%v", err)
	}
	return pass()
}

// scenarioDurableRestart: SIGKILL loses nothing acknowledged. A fresh
// process serves the commit, still honours the live reservation, accepts
// the dead process's step_id for it, and recover_in_flight empties.
func scenarioDurableRestart(ctx context.Context, s *Session) Outcome {
	a, _, dir, err := durableFresh(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	if _, err := a.run("r", "p"); err != nil {
		return failf("%v", err)
	}
	done, err := a.begin(stepParams("r", "p", "0", "k0"), "new")
	if err != nil {
		return failf("%v", err)
	}
	if err := a.commit(done.StepID, "success", map[string]string{"reply": "kept"}); err != nil {
		return failf("%v", err)
	}
	open, err := a.begin(stepParams("r", "p", "1", "k1"), "new")
	if err != nil {
		return failf("%v", err)
	}
	if err := a.h.Kill(); err != nil {
		return failf("SIGKILL: %v", err)
	}
	b, _, err := durableSpawn(ctx, s, dir)
	if err != nil {
		return failf("%v", err)
	}
	if got, err := b.begin(stepParams("r", "p", "0", "k0"), "already_committed"); err != nil {
		return failf("after SIGKILL: %v", err)
	} else if !sameJSON(got.PriorOutput, []byte(`{"reply":"kept"}`)) {
		return failf("after SIGKILL: prior_output %s", got.PriorOutput)
	}
	if got, err := b.begin(stepParams("r", "p", "1", "k1"), "in_progress"); err != nil || got.StepID != open.StepID {
		return failf("the dead process's live reservation: %+v, %v", got, err)
	}
	if runs, err := b.recover(0); err != nil || len(runs) != 1 || runs[0].RunID != "r" {
		return failf("recover_in_flight after SIGKILL: %+v, %v; want run r", runs, err)
	}
	if err := b.commit(open.StepID, "success", "finished elsewhere"); err != nil {
		return failf("committing the dead process's reservation: %v", err)
	}
	if runs, err := b.recover(0); err != nil || len(runs) != 0 {
		return failf("recover_in_flight after the last commit: %+v, %v", runs, err)
	}
	return pass()
}

// scenarioDurableConcurrent: three processes race begin_step on the same
// keys at once; exactly one gets "new" per key, every other answer names
// the winner's step.
func scenarioDurableConcurrent(ctx context.Context, s *Session) Outcome {
	const procs, keys = 3, 30
	dir, err := s.TempDir()
	if err != nil {
		return failf("%v", err)
	}
	var ps []dProc
	for range procs {
		p, _, err := durableSpawn(ctx, s, dir)
		if err != nil {
			return failf("%v", err)
		}
		if _, err := p.run("race", "p"); err != nil {
			return failf("%v", err)
		}
		ps = append(ps, p)
	}
	type answer struct{ status, stepID string }
	var mu sync.Mutex
	answers := map[int][]answer{}
	errs := make(chan error, procs)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for k := range keys {
				if i%2 == 1 {
					k = keys - 1 - k
				}
				b, err := p.begin(stepParams("race", "p", fmt.Sprint(k), fmt.Sprintf("race:%d", k)), "")
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				answers[k] = append(answers[k], answer{b.Status, b.StepID})
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return failf("%v", err)
	}
	for k := range keys {
		winner := ""
		for _, a := range answers[k] {
			if a.status == "new" {
				if winner != "" {
					return failf("key %d: two callers got new (%s and %s)", k, winner, a.stepID)
				}
				winner = a.stepID
			}
		}
		for _, a := range answers[k] {
			if winner == "" || a.stepID != winner || (a.status != "new" && a.status != "in_progress") {
				return failf("key %d: answers %+v", k, answers[k])
			}
		}
	}
	return pass()
}
