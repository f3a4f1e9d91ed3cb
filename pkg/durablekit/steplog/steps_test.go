package steplog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
)

const ttl = 5 * time.Minute

// TestBeginStepResolution walks begin_step's resolution order: committed
// success, committed error, live reservation, then a new reservation.
func TestBeginStepResolution(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(f *fixture) (prior string) // returns the step id the setup made, if any
		req     StepRequest
		want    Status
		samePri bool   // the answer names the setup's step id
		output  string // already_committed's output
		errOut  string // prior_error's error
		wantErr error
		rows    map[string]int // rows per state for the key afterwards
	}{
		{
			name: "free key is reserved",
			req:  req("r", "p", "s", "k", ttl), want: StatusNew,
			rows: map[string]int{string(storage.Reserved): 1},
		},
		{
			name: "live reservation is reported, nothing created",
			setup: func(f *fixture) string {
				return f.begin(req("r", "p", "s", "k", ttl)).StepID
			},
			req: req("r", "p", "s", "k", ttl), want: StatusInProgress, samePri: true,
			rows: map[string]int{string(storage.Reserved): 1},
		},
		{
			name: "expired reservation is superseded by a new one",
			setup: func(f *fixture) string {
				id := f.begin(req("r", "p", "s", "k", time.Second)).StepID
				f.clock.Advance(2 * time.Second)
				return id
			},
			req: req("r", "p", "s", "k", ttl), want: StatusNew,
			rows: map[string]int{string(storage.Reserved): 1, string(storage.Superseded): 1},
		},
		{
			name: "committed success is served back",
			setup: func(f *fixture) string {
				id := f.begin(req("r", "p", "s", "k", ttl)).StepID
				f.commit(id, OutcomeSuccess, `{"text":"hi"}`, "")
				return id
			},
			req: req("r", "p", "s", "k", ttl), want: StatusAlreadyCommitted, samePri: true, output: `{"text":"hi"}`,
			rows: map[string]int{string(storage.Committed): 1},
		},
		{
			name: "committed success without output has no prior_output",
			setup: func(f *fixture) string {
				id := f.begin(req("r", "p", "s", "k", ttl)).StepID
				f.commit(id, OutcomeSuccess, "", `{"code":"X","message":"kept but not served"}`)
				return id
			},
			req: req("r", "p", "s", "k", ttl), want: StatusAlreadyCommitted, samePri: true,
			rows: map[string]int{string(storage.Committed): 1},
		},
		{
			name: "committed error is terminal, even long after and after an abandon attempt",
			setup: func(f *fixture) string {
				id := f.begin(req("r", "p", "s", "k", ttl)).StepID
				f.commit(id, OutcomeError, `{"partial":true}`, `{"code":"STEP_FAILED","message":"boom"}`)
				if ok, err := f.AbandonStep(context.Background(), id, "try to clear"); ok || err != nil {
					f.t.Fatalf("abandon of a committed step: ack=%v err=%v", ok, err)
				}
				f.clock.Advance(48 * time.Hour)
				return id
			},
			req: req("r", "p", "s", "k", ttl), want: StatusPriorError, samePri: true,
			errOut: `{"code":"STEP_FAILED","message":"boom"}`,
			rows:   map[string]int{string(storage.Committed): 1},
		},
		{
			name: "abandoned reservation frees the key",
			setup: func(f *fixture) string {
				id := f.begin(req("r", "p", "s", "k", ttl)).StepID
				if ok, err := f.AbandonStep(context.Background(), id, "probe"); !ok || err != nil {
					f.t.Fatalf("abandon: ack=%v err=%v", ok, err)
				}
				return id
			},
			req: req("r", "p", "s", "k", ttl), want: StatusNew,
			rows: map[string]int{string(storage.Reserved): 1, string(storage.Abandoned): 1},
		},
		{
			name:    "unknown run",
			req:     req("nope", "p", "s", "k", ttl),
			wantErr: ErrRunNotFound,
			rows:    map[string]int{string(storage.Reserved): 0},
		},
		{
			name: "key reused for another step name",
			setup: func(f *fixture) string {
				return f.begin(req("r", "p", "s", "k", ttl)).StepID
			},
			req:     req("r", "p", "other", "k", ttl),
			wantErr: &NondeterminismError{},
			rows:    map[string]int{string(storage.Reserved): 1},
		},
		{
			name: "key reused for another run",
			setup: func(f *fixture) string {
				id := f.begin(req("r", "p", "s", "k", ttl)).StepID
				f.commit(id, OutcomeSuccess, `1`, "")
				return id
			},
			req:     req("r2", "p", "s", "k", ttl),
			wantErr: &NondeterminismError{},
			rows:    map[string]int{string(storage.Committed): 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.run("r", "p")
			f.run("r2", "p")
			prior := ""
			if tc.setup != nil {
				prior = tc.setup(f)
			}
			res, err := f.BeginStep(context.Background(), tc.req)
			switch want := tc.wantErr.(type) {
			case nil:
				if err != nil {
					t.Fatalf("begin_step: %v", err)
				}
			case *NondeterminismError:
				var nd *NondeterminismError
				if !errors.As(err, &nd) || nd.Recorded != (storage.Identity{RunID: "r", PhaseID: "p", StepName: "s"}) {
					t.Fatalf("got %v, want nondeterminism naming r/p/s", err)
				}
			default:
				if !errors.Is(err, want) {
					t.Fatalf("got %v, want %v", err, want)
				}
			}
			if tc.wantErr == nil {
				if res.Status != tc.want {
					t.Fatalf("status %s, want %s", res.Status, tc.want)
				}
				if tc.samePri != (res.StepID == prior) {
					t.Errorf("step id %s, setup's %s, want same=%v", res.StepID, prior, tc.samePri)
				}
				if string(res.Output) != tc.output || string(res.Error) != tc.errOut {
					t.Errorf("output %q error %q, want %q %q", res.Output, res.Error, tc.output, tc.errOut)
				}
				if (tc.want == StatusNew || tc.want == StatusInProgress) == res.ExpiresAt.IsZero() {
					t.Errorf("expires_at %v for status %s", res.ExpiresAt, res.Status)
				}
			}
			for state, n := range tc.rows {
				if got := f.count("k", state); got != n {
					t.Errorf("%d %s rows for the key, want %d", got, state, n)
				}
			}
		})
	}
}

// TestCommitStep covers commit's rules: unknown, abandoned and superseded
// steps are refused; a repeat is acknowledged with the first outcome kept;
// an expired reservation nobody took over is accepted.
func TestCommitStep(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(f *fixture) string // returns the step id to commit
		wantErr error
		want    Status // begin_step on the key afterwards
		output  string
	}{
		{
			name:  "live reservation",
			setup: func(f *fixture) string { return f.begin(req("r", "p", "s", "k", ttl)).StepID },
			want:  StatusAlreadyCommitted, output: `"second"`,
		},
		{
			name: "repeat keeps the first outcome",
			setup: func(f *fixture) string {
				id := f.begin(req("r", "p", "s", "k", ttl)).StepID
				f.commit(id, OutcomeSuccess, `"first"`, "")
				return id
			},
			want: StatusAlreadyCommitted, output: `"first"`,
		},
		{
			name: "expired but not superseded is accepted",
			setup: func(f *fixture) string {
				id := f.begin(req("r", "p", "s", "k", time.Second)).StepID
				f.clock.Advance(time.Hour)
				return id
			},
			want: StatusAlreadyCommitted, output: `"second"`,
		},
		{
			name: "superseded is refused and the new holder keeps the key",
			setup: func(f *fixture) string {
				id := f.begin(req("r", "p", "s", "k", time.Second)).StepID
				f.clock.Advance(2 * time.Second)
				if r := f.begin(req("r", "p", "s", "k", ttl)); r.Status != StatusNew {
					f.t.Fatalf("re-reserve: %s", r.Status)
				}
				return id
			},
			wantErr: ErrSuperseded,
			want:    StatusInProgress,
		},
		{
			name: "abandoned is not found",
			setup: func(f *fixture) string {
				id := f.begin(req("r", "p", "s", "k", ttl)).StepID
				if _, err := f.AbandonStep(context.Background(), id, ""); err != nil {
					f.t.Fatal(err)
				}
				return id
			},
			wantErr: ErrStepNotFound,
			want:    StatusNew,
		},
		{
			name:    "unknown step",
			setup:   func(f *fixture) string { return "step_does_not_exist" },
			wantErr: ErrStepNotFound,
			want:    StatusNew,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.run("r", "p")
			id := tc.setup(f)
			err := f.CommitStep(context.Background(), Commit{StepID: id, Outcome: OutcomeSuccess, Output: []byte(`"second"`)})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("commit: %v, want %v", err, tc.wantErr)
			}
			res := f.begin(req("r", "p", "s", "k", ttl))
			if res.Status != tc.want || string(res.Output) != tc.output {
				t.Fatalf("afterwards begin_step: %s %q, want %s %q", res.Status, res.Output, tc.want, tc.output)
			}
			if n := f.count("k", string(storage.Committed)); n > 1 {
				t.Fatalf("%d committed rows for one key", n)
			}
		})
	}
}

// TestAbandonStep: ack only when a reservation was released; committed
// outcomes are never touched.
func TestAbandonStep(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fixture) string
		ack   bool
		after Status
	}{
		{"live reservation", func(f *fixture) string { return f.begin(req("r", "p", "s", "k", ttl)).StepID }, true, StatusNew},
		{"expired reservation", func(f *fixture) string {
			id := f.begin(req("r", "p", "s", "k", time.Second)).StepID
			f.clock.Advance(time.Minute)
			return id
		}, true, StatusNew},
		{"already abandoned", func(f *fixture) string {
			id := f.begin(req("r", "p", "s", "k", ttl)).StepID
			if ok, _ := f.AbandonStep(context.Background(), id, ""); !ok {
				f.t.Fatal("first abandon not acked")
			}
			return id
		}, false, StatusNew},
		{"committed", func(f *fixture) string {
			id := f.begin(req("r", "p", "s", "k", ttl)).StepID
			f.commit(id, OutcomeSuccess, `{"kept":true}`, "")
			return id
		}, false, StatusAlreadyCommitted},
		{"superseded", func(f *fixture) string {
			id := f.begin(req("r", "p", "s", "k", time.Second)).StepID
			f.clock.Advance(time.Minute)
			f.begin(req("r", "p", "s", "k", ttl))
			return id
		}, false, StatusInProgress},
		{"never issued", func(f *fixture) string { return "step_unknown" }, false, StatusNew},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.run("r", "p")
			id := tc.setup(f)
			ack, err := f.AbandonStep(context.Background(), id, "test")
			if err != nil || ack != tc.ack {
				t.Fatalf("abandon: ack=%v err=%v, want ack=%v", ack, err, tc.ack)
			}
			if got := f.begin(req("r", "p", "s", "k", ttl)).Status; got != tc.after {
				t.Fatalf("begin_step afterwards: %s, want %s", got, tc.after)
			}
		})
	}
}

// TestUniqueKeyBackstop: even a statement that bypassed BeginStep could not
// give one key two live-or-committed rows; the index refuses it.
func TestUniqueKeyBackstop(t *testing.T) {
	f := newFixture(t)
	f.run("r", "p")
	id := f.begin(req("r", "p", "s", "k", ttl)).StepID
	f.commit(id, OutcomeSuccess, `1`, "")
	err := f.rawExec(`INSERT INTO steps (step_id, run_id, phase_id, step_name, idempotency_key, state, reserved_at, expires_at,
		outcome, committed_at, commit_seq) VALUES ('dup', 'r', 'p', 's', 'k', 'committed', 1, 2, 'success', 3, 99)`)
	if err == nil {
		t.Fatal("a second committed row for one key was accepted")
	}
	// And a committed row without its outcome columns cannot exist.
	err = f.rawExec(`UPDATE steps SET commit_seq = NULL WHERE step_id = ?`, id)
	if err == nil {
		t.Fatal("a committed row lost its commit_seq")
	}
}
