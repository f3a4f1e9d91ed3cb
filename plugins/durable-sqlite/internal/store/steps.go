package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
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
	Identity
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
// insert are one BEGIN IMMEDIATE transaction, so across every process on the
// file exactly one caller gets StatusNew for a free key.
func (s *Store) BeginStep(ctx context.Context, r StepRequest) (BeginResult, error) {
	var res BeginResult
	err := s.write(ctx, "begin_step", func(tx *sql.Tx, now int64) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE run_id = ? AND phase_id = ?`,
			r.RunID, r.PhaseID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrRunNotFound
		}
		if err != nil {
			return err
		}

		var cur struct {
			id             string
			who            Identity
			state          string
			expires        int64
			outcome        sql.NullString
			output, errout sql.NullString
		}
		err = tx.QueryRowContext(ctx, `
			SELECT step_id, run_id, phase_id, step_name, state, expires_at, outcome, output_json, error_json
			FROM steps WHERE idempotency_key = ? AND state IN ('reserved', 'committed')`,
			r.IdempotencyKey).Scan(&cur.id, &cur.who.RunID, &cur.who.PhaseID, &cur.who.StepName,
			&cur.state, &cur.expires, &cur.outcome, &cur.output, &cur.errout)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case cur.who != r.Identity:
			return &NondeterminismError{Recorded: cur.who}
		case cur.state == stateCommitted && cur.outcome.String == OutcomeError:
			// Terminal for the key: a retry must use a new key.
			res = BeginResult{Status: StatusPriorError, StepID: cur.id, Error: bytesOf(cur.errout)}
			return nil
		case cur.state == stateCommitted:
			res = BeginResult{Status: StatusAlreadyCommitted, StepID: cur.id, Output: bytesOf(cur.output)}
			return nil
		case cur.expires > now:
			// Someone holds it; report and create nothing.
			res = BeginResult{Status: StatusInProgress, StepID: cur.id, ExpiresAt: fromNanos(cur.expires)}
			return nil
		}

		id := newStepID()
		expires := now + int64(r.TTL)
		if cur.id != "" {
			// The old holder's reservation lapsed: it can no longer commit.
			if _, err := tx.ExecContext(ctx, `
				UPDATE steps SET state = 'superseded', released_at = ?, superseded_by = ?
				WHERE step_id = ? AND state = 'reserved'`, now, id, cur.id); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO steps (step_id, run_id, phase_id, step_name, idempotency_key, state, payload_json, reserved_at, expires_at)
			VALUES (?, ?, ?, ?, ?, 'reserved', ?, ?, ?)`,
			id, r.RunID, r.PhaseID, r.StepName, r.IdempotencyKey, nullable(r.Payload), now, expires); err != nil {
			return err
		}
		res = BeginResult{Status: StatusNew, StepID: id, ExpiresAt: fromNanos(expires)}
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
func (s *Store) CommitStep(ctx context.Context, c Commit) error {
	return s.write(ctx, "commit_step", func(tx *sql.Tx, now int64) error {
		var state string
		err := tx.QueryRowContext(ctx, `SELECT state FROM steps WHERE step_id = ?`, c.StepID).Scan(&state)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrStepNotFound
		case err != nil:
			return err
		}
		switch state {
		case stateCommitted:
			return nil
		case stateSuperseded:
			return ErrSuperseded
		case stateAbandoned:
			return ErrStepNotFound
		}
		var seq int64
		if err := tx.QueryRowContext(ctx,
			`UPDATE meta SET last_commit_seq = last_commit_seq + 1 WHERE id = 1 RETURNING last_commit_seq`).Scan(&seq); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `
			UPDATE steps SET state = 'committed', outcome = ?, output_json = ?, error_json = ?,
				committed_at = ?, commit_seq = ?
			WHERE step_id = ? AND state = 'reserved'`,
			c.Outcome, nullable(c.Output), nullable(c.Error), now, seq, c.StepID)
		return err
	})
}

// AbandonStep releases a reservation so the key is free again. It reports
// false, changing nothing, when the step is unknown or no longer reserved:
// a committed outcome is never cleared.
func (s *Store) AbandonStep(ctx context.Context, stepID, reason string) (bool, error) {
	released := false
	err := s.write(ctx, "abandon_step", func(tx *sql.Tx, now int64) error {
		r, err := tx.ExecContext(ctx, `
			UPDATE steps SET state = 'abandoned', released_at = ?, release_reason = ?
			WHERE step_id = ? AND state = 'reserved'`, now, reason, stepID)
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		released = n == 1
		return err
	})
	return released, err
}
