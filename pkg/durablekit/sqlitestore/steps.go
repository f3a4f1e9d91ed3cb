package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
)

// ActiveStep is the reserved or committed step holding key (the partial
// unique index steps_active_key allows at most one), or nil.
func (s *Store) ActiveStep(ctx context.Context, key string) (*storage.Step, error) {
	var (
		st             storage.Step
		state          string
		reserved, exp  int64
		outcome        sql.NullString
		output, errout sql.NullString
	)
	err := s.q.QueryRowContext(ctx, `
		SELECT step_id, run_id, phase_id, step_name, state, reserved_at, expires_at, outcome, output_json, error_json
		FROM steps WHERE idempotency_key = ? AND state IN ('reserved', 'committed')`, key).Scan(
		&st.ID, &st.RunID, &st.PhaseID, &st.StepName, &state, &reserved, &exp, &outcome, &output, &errout)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, backend("active step", err)
	}
	st.IdempotencyKey, st.State = key, storage.State(state)
	st.ReservedAt, st.ExpiresAt = fromNanos(reserved), fromNanos(exp)
	st.Outcome, st.Output, st.Error = outcome.String, bytesOf(output), bytesOf(errout)
	return &st, nil
}

// StepState is a step's state, "" when there is no such step.
func (s *Store) StepState(ctx context.Context, stepID string) (storage.State, error) {
	var state string
	err := s.q.QueryRowContext(ctx, `SELECT state FROM steps WHERE step_id = ?`, stepID).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", backend("step state", err)
	}
	return storage.State(state), nil
}

// InsertReservation adds a reserved step.
func (s *Store) InsertReservation(ctx context.Context, st storage.Step) error {
	_, err := s.q.ExecContext(ctx, `
		INSERT INTO steps (step_id, run_id, phase_id, step_name, idempotency_key, state, payload_json, reserved_at, expires_at)
		VALUES (?, ?, ?, ?, ?, 'reserved', ?, ?, ?)`,
		st.ID, st.RunID, st.PhaseID, st.StepName, st.IdempotencyKey, nullable(st.Payload), nanos(st.ReservedAt), nanos(st.ExpiresAt))
	if err != nil {
		return backend("insert reservation", err)
	}
	return nil
}

// Supersede ends a lapsed reservation in favour of the step by.
func (s *Store) Supersede(ctx context.Context, stepID, by string, now time.Time) error {
	_, err := s.q.ExecContext(ctx, `
		UPDATE steps SET state = 'superseded', released_at = ?, superseded_by = ?
		WHERE step_id = ? AND state = 'reserved'`, nanos(now), by, stepID)
	if err != nil {
		return backend("supersede", err)
	}
	return nil
}

// Commit records a reserved step's outcome with the next commit sequence
// number (meta.last_commit_seq: query_run's order).
func (s *Store) Commit(ctx context.Context, stepID, outcome string, output, errJSON []byte, now time.Time) error {
	var seq int64
	if err := s.q.QueryRowContext(ctx,
		`UPDATE meta SET last_commit_seq = last_commit_seq + 1 WHERE id = 1 RETURNING last_commit_seq`).Scan(&seq); err != nil {
		return backend("commit seq", err)
	}
	_, err := s.q.ExecContext(ctx, `
		UPDATE steps SET state = 'committed', outcome = ?, output_json = ?, error_json = ?,
			committed_at = ?, commit_seq = ?
		WHERE step_id = ? AND state = 'reserved'`,
		outcome, nullable(output), nullable(errJSON), nanos(now), seq, stepID)
	if err != nil {
		return backend("commit", err)
	}
	return nil
}

// Abandon releases a reservation; false when the step was not reserved.
func (s *Store) Abandon(ctx context.Context, stepID, reason string, now time.Time) (bool, error) {
	r, err := s.q.ExecContext(ctx, `
		UPDATE steps SET state = 'abandoned', released_at = ?, release_reason = ?
		WHERE step_id = ? AND state = 'reserved'`, nanos(now), reason, stepID)
	if err != nil {
		return false, backend("abandon", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return false, backend("abandon", err)
	}
	return n == 1, nil
}
