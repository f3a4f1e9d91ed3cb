package steplog

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestEpochsMonotonicAndPersisted: every begin_workflow_run (a repeat too)
// gets a higher epoch, two handles on one file share the counter, and a
// reopened file continues from where it was.
func TestEpochsMonotonicAndPersisted(t *testing.T) {
	f := newFixture(t)
	other := f.open()
	var seen []uint64
	for i, s := range []*Log{f.Log, other, f.Log, other} {
		e, err := s.BeginWorkflowRun(context.Background(), "r", []string{"a", "b"}[i%2], nil)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, e)
	}
	for i, e := range seen {
		if e != uint64(i+1) {
			t.Fatalf("epochs %v, want 1, 2, 3, 4", seen)
		}
	}
	f.Store().Close()
	other.Store().Close()
	again := f.open()
	e, err := again.BeginWorkflowRun(context.Background(), "r", "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if e != 5 {
		t.Fatalf("after reopening, epoch %d, want 5", e)
	}
}

// TestBeginWorkflowRunKeepsSteps: re-registering a run keeps its commits
// and its first inputs.
func TestBeginWorkflowRunKeepsSteps(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.BeginWorkflowRun(ctx, "r", "p", []byte(`{"first":1}`)); err != nil {
		t.Fatal(err)
	}
	id := f.begin(req("r", "p", "s", "k", ttl)).StepID
	f.commit(id, OutcomeSuccess, `"out"`, "")
	if _, err := f.BeginWorkflowRun(ctx, "r", "p", []byte(`{"second":2}`)); err != nil {
		t.Fatal(err)
	}
	steps, err := f.QueryRun(ctx, "r", "p")
	if err != nil || len(steps) != 1 || steps[0].StepID != id {
		t.Fatalf("after re-registering: %+v, %v", steps, err)
	}
	var inputs string
	if err := f.rawQueryRow(`SELECT inputs_json FROM runs WHERE run_id = 'r'`).Scan(&inputs); err != nil || inputs != `{"first":1}` {
		t.Fatalf("inputs %q, %v", inputs, err)
	}
}

// TestQueryRun: committed steps of that run only, in commit order, errors
// included, reservations excluded.
func TestQueryRun(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.run("r", "p")
	f.run("r", "other-phase")
	a := f.begin(req("r", "p", "a", "k-a", ttl)).StepID
	b := f.begin(req("r", "p", "b", "k-b", ttl)).StepID
	c := f.begin(req("r", "p", "c", "k-c", ttl)).StepID
	f.begin(req("r", "p", "d", "k-d", ttl)) // stays reserved
	x := f.begin(req("r", "other-phase", "a", "k-x", ttl)).StepID
	f.commit(c, OutcomeSuccess, `"c"`, "")
	f.commit(x, OutcomeSuccess, `"x"`, "")
	f.commit(a, OutcomeError, "", `{"code":"E","message":"m"}`)
	f.commit(b, OutcomeSuccess, "", "")

	steps, err := f.QueryRun(ctx, "r", "p")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ id, outcome, output, errJSON string }{
		{c, OutcomeSuccess, `"c"`, ""}, {a, OutcomeError, "", `{"code":"E","message":"m"}`}, {b, OutcomeSuccess, "", ""},
	}
	if len(steps) != len(want) {
		t.Fatalf("%d steps, want %d: %+v", len(steps), len(want), steps)
	}
	for i, w := range want {
		s := steps[i]
		if s.StepID != w.id || s.Outcome != w.outcome || string(s.Output) != w.output || string(s.Error) != w.errJSON {
			t.Errorf("step %d: %+v, want %+v", i, s, w)
		}
		if i > 0 && !s.CommittedAt.After(steps[i-1].CommittedAt) {
			t.Errorf("committed_at not increasing at %d", i)
		}
	}
	if empty, err := f.QueryRun(ctx, "r", "no-commits-yet"); !errors.Is(err, ErrRunNotFound) {
		t.Fatalf("unknown phase: %v %v", empty, err)
	}
	f.run("r", "fresh")
	if empty, err := f.QueryRun(ctx, "r", "fresh"); err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("run without commits: %#v %v, want an empty list", empty, err)
	}
}

// TestRecoverInFlight: runs with outstanding reservations (live or expired)
// and an epoch above the cursor, in epoch order, with their latest commit.
func TestRecoverInFlight(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.run("done", "p")          // everything committed: never reported
	eOld := f.run("old", "p")   // re-registered below, so it moves last
	eBusy := f.run("busy", "p") // one commit, two outstanding
	f.run("quiet", "p")         // abandoned only: nothing outstanding

	d := f.begin(req("done", "p", "s1", "done-1", ttl)).StepID
	f.commit(d, OutcomeSuccess, `1`, "")
	f.begin(req("old", "p", "s1", "old-1", time.Second))
	b1 := f.begin(req("busy", "p", "s1", "busy-1", ttl)).StepID
	f.commit(b1, OutcomeSuccess, `1`, "")
	f.begin(req("busy", "p", "s2", "busy-2", ttl))
	f.begin(req("busy", "p", "s3", "busy-3", ttl))
	q := f.begin(req("quiet", "p", "s1", "quiet-1", ttl)).StepID
	if _, err := f.AbandonStep(ctx, q, ""); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute) // old-1 expires: still outstanding
	eOldAgain := f.run("old", "p")

	type row struct {
		run, last string
		keys      []string
	}
	tests := []struct {
		since uint64
		want  []row
	}{
		{0, []row{{"busy", "s1", []string{"busy-2", "busy-3"}}, {"old", "", []string{"old-1"}}}},
		{eBusy, []row{{"old", "", []string{"old-1"}}}},
		{eOld, []row{{"busy", "s1", []string{"busy-2", "busy-3"}}, {"old", "", []string{"old-1"}}}},
		{eOldAgain, nil},
		{1 << 63, nil},
		{^uint64(0), nil},
	}
	for _, tc := range tests {
		got, err := f.RecoverInFlight(ctx, tc.since)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil {
			t.Fatalf("since %d: nil slice, want empty", tc.since)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("since %d: %d runs %+v, want %d", tc.since, len(got), got, len(tc.want))
		}
		for i, w := range tc.want {
			g := got[i]
			if g.RunID != w.run || g.LastCommittedStep != w.last || g.HasCommitted != (w.last != "") {
				t.Errorf("since %d run %d: %+v, want %+v", tc.since, i, g, w)
			}
			if i > 0 && g.Epoch <= got[i-1].Epoch {
				t.Errorf("since %d: epochs out of order", tc.since)
			}
			if len(g.Outstanding) != len(w.keys) {
				t.Fatalf("since %d run %s: outstanding %+v, want %v", tc.since, g.RunID, g.Outstanding, w.keys)
			}
			for j, k := range w.keys {
				if g.Outstanding[j].IdempotencyKey != k {
					t.Errorf("since %d run %s: outstanding[%d] = %s, want %s", tc.since, g.RunID, j, g.Outstanding[j].IdempotencyKey, k)
				}
			}
		}
	}
}
