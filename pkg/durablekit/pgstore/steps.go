package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
)

// sqlActiveStep is an equality probe of the partial unique index
// steps_active_key (its predicate is the WHERE clause's).
const sqlActiveStep = `
	SELECT step_id, run_id, phase_id, step_name, state, reserved_at, expires_at, outcome, output_json, error_json
	FROM steps WHERE idempotency_key = $1 AND state IN ('reserved', 'committed')`

// ActiveStep is the reserved or committed step holding key (the partial
// unique index steps_active_key allows at most one), or nil.
func (s *Store) ActiveStep(ctx context.Context, key string) (*storage.Step, error) {
	var (
		st                      storage.Step
		state                   string
		reserved, exp           int64
		outcome, output, errout *string
	)
	err := s.runner().QueryRow(ctx, sqlActiveStep, key).Scan(
		&st.ID, &st.RunID, &st.PhaseID, &st.StepName, &state, &reserved, &exp, &outcome, &output, &errout)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, backend("active step", err)
	}
	st.IdempotencyKey, st.State = key, storage.State(state)
	st.ReservedAt, st.ExpiresAt = fromNanos(reserved), fromNanos(exp)
	st.Outcome, st.Output, st.Error = str(outcome), bytesOf(output), bytesOf(errout)
	return &st, nil
}

// StepState is a step's state, "" when there is no such step.
func (s *Store) StepState(ctx context.Context, stepID string) (storage.State, error) {
	var state string
	err := s.runner().QueryRow(ctx, `SELECT state FROM steps WHERE step_id = $1`, stepID).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", backend("step state", err)
	}
	return storage.State(state), nil
}

// InsertReservation adds a reserved step.
func (s *Store) InsertReservation(ctx context.Context, st storage.Step) error {
	_, err := s.runner().Exec(ctx, `
		INSERT INTO steps (step_id, run_id, phase_id, step_name, idempotency_key, state, payload_json, reserved_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, 'reserved', $6, $7, $8)`,
		st.ID, st.RunID, st.PhaseID, st.StepName, st.IdempotencyKey, nullable(st.Payload), nanos(st.ReservedAt), nanos(st.ExpiresAt))
	if err != nil {
		return backend("insert reservation", err)
	}
	return nil
}

// Supersede ends a lapsed reservation in favour of the step by.
func (s *Store) Supersede(ctx context.Context, stepID, by string, now time.Time) error {
	_, err := s.runner().Exec(ctx, `
		UPDATE steps SET state = 'superseded', released_at = $1, superseded_by = $2
		WHERE step_id = $3 AND state = 'reserved'`, nanos(now), by, stepID)
	if err != nil {
		return backend("supersede", err)
	}
	return nil
}

// Commit records a reserved step's outcome with the next commit sequence
// number (meta.last_commit_seq: query_run's order). Allocated under the
// namespace lock, the numbers grow in commit order and are never reused (a
// rolled-back allocation rolls back with the row it numbered).
func (s *Store) Commit(ctx context.Context, stepID, outcome string, output, errJSON []byte, now time.Time) error {
	var seq int64
	if err := s.runner().QueryRow(ctx,
		`UPDATE meta SET last_commit_seq = last_commit_seq + 1 WHERE id = 1 RETURNING last_commit_seq`).Scan(&seq); err != nil {
		return backend("commit seq", err)
	}
	_, err := s.runner().Exec(ctx, `
		UPDATE steps SET state = 'committed', outcome = $1, output_json = $2, error_json = $3,
			committed_at = $4, commit_seq = $5
		WHERE step_id = $6 AND state = 'reserved'`,
		outcome, nullable(output), nullable(errJSON), nanos(now), seq, stepID)
	if err != nil {
		return backend("commit", err)
	}
	return nil
}

// Abandon releases a reservation; false when the step was not reserved.
func (s *Store) Abandon(ctx context.Context, stepID, reason string, now time.Time) (bool, error) {
	tag, err := s.runner().Exec(ctx, `
		UPDATE steps SET state = 'abandoned', released_at = $1, release_reason = $2
		WHERE step_id = $3 AND state = 'reserved'`, nanos(now), reason, stepID)
	if err != nil {
		return false, backend("abandon", err)
	}
	return tag.RowsAffected() == 1, nil
}
