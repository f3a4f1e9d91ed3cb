package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
)

// NextEpoch bumps the store-wide counter in meta: it only grows, which is
// why a restart never hands out an epoch twice.
func (s *Store) NextEpoch(ctx context.Context) (int64, error) {
	var epoch int64
	if err := s.q.QueryRowContext(ctx,
		`UPDATE meta SET last_epoch = last_epoch + 1 WHERE id = 1 RETURNING last_epoch`).Scan(&epoch); err != nil {
		return 0, backend("next epoch", err)
	}
	return epoch, nil
}

// UpsertRun records a run at epoch, keeping its first non-null inputs.
func (s *Store) UpsertRun(ctx context.Context, runID, phaseID string, epoch int64, inputs []byte, now time.Time) error {
	_, err := s.q.ExecContext(ctx, `
		INSERT INTO runs (run_id, phase_id, epoch, inputs_json, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, phase_id) DO UPDATE SET
			epoch = excluded.epoch,
			inputs_json = coalesce(runs.inputs_json, excluded.inputs_json),
			updated_at = excluded.updated_at`,
		runID, phaseID, epoch, nullable(inputs), nanos(now), nanos(now))
	if err != nil {
		return backend("upsert run", err)
	}
	return nil
}

// RunExists reports whether begin_workflow_run registered the run.
func (s *Store) RunExists(ctx context.Context, runID, phaseID string) (bool, error) {
	var one int
	err := s.q.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE run_id = ? AND phase_id = ?`, runID, phaseID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, backend("run exists", err)
	}
	return true, nil
}

// CommittedSteps reads the run's existence and its commits in one
// statement: the LEFT JOIN yields one all-NULL step row for a run with no
// commits.
func (s *Store) CommittedSteps(ctx context.Context, runID, phaseID string) ([]storage.StepRecord, bool, error) {
	rows, err := s.q.QueryContext(ctx, `
		SELECT s.step_id, s.step_name, s.idempotency_key, s.outcome, s.committed_at, s.output_json, s.error_json
		FROM runs r
		LEFT JOIN steps s
			ON s.run_id = r.run_id AND s.phase_id = r.phase_id AND s.state = 'committed'
		WHERE r.run_id = ? AND r.phase_id = ?
		ORDER BY s.commit_seq`, runID, phaseID)
	if err != nil {
		return nil, false, backend("committed steps", err)
	}
	defer rows.Close()
	found := false
	out := []storage.StepRecord{}
	for rows.Next() {
		found = true
		var id, name, key, outcome sql.NullString
		var committed sql.NullInt64
		var output, errJSON sql.NullString
		if err := rows.Scan(&id, &name, &key, &outcome, &committed, &output, &errJSON); err != nil {
			return nil, false, backend("committed steps", err)
		}
		if !id.Valid {
			continue // the run exists and has no commits
		}
		out = append(out, storage.StepRecord{
			StepID: id.String, StepName: name.String, IdempotencyKey: key.String, Outcome: outcome.String,
			CommittedAt: fromNanos(committed.Int64), Output: bytesOf(output), Error: bytesOf(errJSON),
		})
	}
	if err := rows.Err(); err != nil {
		return nil, false, backend("committed steps", err)
	}
	return out, found, nil
}

// InFlight walks only reserved rows (a partial index), however many
// committed steps the file holds, in one statement.
func (s *Store) InFlight(ctx context.Context, sinceEpoch int64) ([]storage.InFlightRun, error) {
	rows, err := s.q.QueryContext(ctx, `
		SELECT r.run_id, r.phase_id, r.epoch,
			(SELECT c.step_name FROM steps c
				WHERE c.run_id = r.run_id AND c.phase_id = r.phase_id AND c.state = 'committed'
				ORDER BY c.commit_seq DESC LIMIT 1),
			s.step_id, s.step_name, s.idempotency_key, s.reserved_at, s.expires_at
		FROM steps s INDEXED BY steps_reserved
		JOIN runs r ON r.run_id = s.run_id AND r.phase_id = s.phase_id
		WHERE s.state = 'reserved' AND r.epoch > ?
		ORDER BY r.epoch, s.reserved_at, s.step_id`, sinceEpoch)
	if err != nil {
		return nil, backend("in flight", err)
	}
	defer rows.Close()
	out := []storage.InFlightRun{}
	for rows.Next() {
		var run storage.InFlightRun
		var epoch int64
		var last sql.NullString
		var res storage.Reservation
		var reserved, expires int64
		if err := rows.Scan(&run.RunID, &run.PhaseID, &epoch, &last,
			&res.StepID, &res.StepName, &res.IdempotencyKey, &reserved, &expires); err != nil {
			return nil, backend("in flight", err)
		}
		res.ReservedAt, res.ExpiresAt = fromNanos(reserved), fromNanos(expires)
		if n := len(out); n > 0 && out[n-1].RunID == run.RunID && out[n-1].PhaseID == run.PhaseID {
			out[n-1].Outstanding = append(out[n-1].Outstanding, res)
			continue
		}
		run.Epoch = uint64(epoch)
		run.LastCommittedStep, run.HasCommitted = last.String, last.Valid
		run.Outstanding = []storage.Reservation{res}
		out = append(out, run)
	}
	if err := rows.Err(); err != nil {
		return nil, backend("in flight", err)
	}
	return out, nil
}
