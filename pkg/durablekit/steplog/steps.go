package steplog

import (
	"context"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
)

// Status is begin_step's verdict.
type Status string

// The four verdicts (BeginStepResponse.status).
const (
	StatusNew              Status = "new"
	StatusInProgress       Status = "in_progress"
	StatusAlreadyCommitted Status = "already_committed"
	StatusPriorError       Status = "prior_error"
)

// Outcomes of a commit.
const (
	OutcomeSuccess = "success"
	OutcomeError   = "error"
)

// StepRequest is begin_step's input.
type StepRequest struct {
	storage.Identity
	IdempotencyKey string
	Payload        []byte        // compact JSON; nil when absent
	TTL            time.Duration // > 0
}

// BeginResult is begin_step's answer. StepID is the new reservation's id
// (new), the holder's (in_progress) or the committed step's.
type BeginResult struct {
	Status    Status
	StepID    string
	Output    []byte    // already_committed: the stored output, nil if none
	Error     []byte    // prior_error: the stored StepError, nil if none
	ExpiresAt time.Time // new and in_progress: when the reservation lapses
}

// BeginStep resolves an idempotency key: a committed success or error is
// served back, a live reservation is reported and left alone, and otherwise
// a new reservation is made (superseding an expired one). The lookup and the
// insert are one write transaction, so across every process on the log
// exactly one caller gets StatusNew for a free key.
func (l *Log) BeginStep(ctx context.Context, r StepRequest) (BeginResult, error) {
	var res BeginResult
	err := l.update(ctx, func(tx storage.Store, now time.Time) error {
		res = BeginResult{}
		ok, err := tx.RunExists(ctx, r.RunID, r.PhaseID)
		if err != nil {
			return err
		}
		if !ok {
			return ErrRunNotFound
		}
		cur, err := tx.ActiveStep(ctx, r.IdempotencyKey)
		switch {
		case err != nil:
			return err
		case cur == nil:
		case cur.Identity != r.Identity:
			return &NondeterminismError{Recorded: cur.Identity}
		case cur.State == storage.Committed && cur.Outcome == OutcomeError:
			// Terminal for the key: a retry must use a new key.
			res = BeginResult{Status: StatusPriorError, StepID: cur.ID, Error: cur.Error}
			return nil
		case cur.State == storage.Committed:
			res = BeginResult{Status: StatusAlreadyCommitted, StepID: cur.ID, Output: cur.Output}
			return nil
		case cur.ExpiresAt.After(now):
			// Someone holds it; report and create nothing.
			res = BeginResult{Status: StatusInProgress, StepID: cur.ID, ExpiresAt: cur.ExpiresAt}
			return nil
		}
		step := storage.Step{ID: newStepID(), Identity: r.Identity, IdempotencyKey: r.IdempotencyKey,
			State: storage.Reserved, Payload: r.Payload, ReservedAt: now, ExpiresAt: now.Add(r.TTL)}
		if cur != nil {
			// The old holder's reservation lapsed: it can no longer commit.
			if err := tx.Supersede(ctx, cur.ID, step.ID, now); err != nil {
				return err
			}
		}
		if err := tx.InsertReservation(ctx, step); err != nil {
			return err
		}
		res = BeginResult{Status: StatusNew, StepID: step.ID, ExpiresAt: step.ExpiresAt}
		return nil
	})
	return res, err
}

// Commit is commit_step's input. Outcome is OutcomeSuccess or OutcomeError
// (checked by the caller); Output and Error are stored as given.
type Commit struct {
	StepID        string
	Outcome       string
	Output, Error []byte
}

// CommitStep records a step's outcome. A step already committed is
// acknowledged unchanged (the first outcome wins); a reservation that
// expired but was not superseded is accepted, because nobody else can have
// run the side effect; a superseded one is refused.
func (l *Log) CommitStep(ctx context.Context, c Commit) error {
	return l.update(ctx, func(tx storage.Store, now time.Time) error {
		state, err := tx.StepState(ctx, c.StepID)
		if err != nil {
			return err
		}
		switch state {
		case "", storage.Abandoned:
			return ErrStepNotFound
		case storage.Committed:
			return nil
		case storage.Superseded:
			return ErrSuperseded
		}
		return tx.Commit(ctx, c.StepID, c.Outcome, c.Output, c.Error, now)
	})
}

// AbandonStep releases a reservation so the key is free again. It reports
// false, changing nothing, when the step is unknown or no longer reserved:
// a committed outcome is never cleared.
func (l *Log) AbandonStep(ctx context.Context, stepID, reason string) (bool, error) {
	released := false
	err := l.update(ctx, func(tx storage.Store, now time.Time) error {
		var err error
		released, err = tx.Abandon(ctx, stepID, reason, now)
		return err
	})
	return released, err
}
