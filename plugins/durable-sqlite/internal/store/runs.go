package store

import (
	"context"
	"database/sql"
	"time"
)

// BeginWorkflowRun registers (or re-registers) a run and returns its new
// epoch: the store-wide counter plus one, persisted in the same transaction.
// A repeat for an existing run keeps its committed steps (a retried workflow
// expects them replayed) and the first non-null inputs.
func (s *Store) BeginWorkflowRun(ctx context.Context, runID, phaseID string, inputs []byte) (uint64, error) {
	var epoch int64
	err := s.write(ctx, "begin_workflow_run", func(tx *sql.Tx, now int64) error {
		if err := tx.QueryRowContext(ctx,
			`UPDATE meta SET last_epoch = last_epoch + 1 WHERE id = 1 RETURNING last_epoch`).Scan(&epoch); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO runs (run_id, phase_id, epoch, inputs_json, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (run_id, phase_id) DO UPDATE SET
				epoch = excluded.epoch,
				inputs_json = coalesce(runs.inputs_json, excluded.inputs_json),
				updated_at = excluded.updated_at`,
			runID, phaseID, epoch, nullable(inputs), now, now)
		return err
	})
	if err != nil {
		return 0, err
	}
	return uint64(epoch), nil
}

// StepRecord is one committed step.
type StepRecord struct {
	StepID, StepName, IdempotencyKey string
	Outcome                          string // "success" or "error"
	CommittedAt                      time.Time
	Output, Error                    []byte // compact JSON; nil when absent
}

// QueryRun returns a run's committed steps in commit order. Reservations,
// abandoned and superseded steps never appear.
func (s *Store) QueryRun(ctx context.Context, runID, phaseID string) ([]StepRecord, error) {
	// One statement, so one snapshot: the run's existence and its steps are
	// read together. The LEFT JOIN yields one all-NULL step row for a run
	// with no commits.
	rows, err := s.db.QueryContext(ctx, `
		SELECT s.step_id, s.step_name, s.idempotency_key, s.outcome, s.committed_at, s.output_json, s.error_json
		FROM runs r
		LEFT JOIN steps s
			ON s.run_id = r.run_id AND s.phase_id = r.phase_id AND s.state = 'committed'
		WHERE r.run_id = ? AND r.phase_id = ?
		ORDER BY s.commit_seq`, runID, phaseID)
	if err != nil {
		return nil, classify(ctx, "query_run", err)
	}
	defer rows.Close()
	found := false
	out := []StepRecord{}
	for rows.Next() {
		found = true
		var id, name, key, outcome sql.NullString
		var committed sql.NullInt64
		var output, errJSON sql.NullString
		if err := rows.Scan(&id, &name, &key, &outcome, &committed, &output, &errJSON); err != nil {
			return nil, classify(ctx, "query_run", err)
		}
		if !id.Valid {
			continue // the run exists and has no commits
		}
		out = append(out, StepRecord{
			StepID: id.String, StepName: name.String, IdempotencyKey: key.String, Outcome: outcome.String,
			CommittedAt: fromNanos(committed.Int64), Output: bytesOf(output), Error: bytesOf(errJSON),
		})
	}
	if err := rows.Err(); err != nil {
		return nil, classify(ctx, "query_run", err)
	}
	if !found {
		return nil, ErrRunNotFound
	}
	return out, nil
}

// Reservation is one outstanding (reserved, not committed or abandoned)
// step. It may have expired; until someone supersedes it, its holder may
// still commit.
type Reservation struct {
	StepID, StepName, IdempotencyKey string
	ReservedAt, ExpiresAt            time.Time
}

// InFlightRun is a run with at least one outstanding reservation.
type InFlightRun struct {
	RunID, PhaseID    string
	Epoch             uint64
	LastCommittedStep string // step_name of the latest commit
	HasCommitted      bool   // whether LastCommittedStep is set
	Outstanding       []Reservation
}

// RecoverInFlight returns every run whose current epoch is above sinceEpoch
// and that has outstanding reservations, in epoch order, with each run's
// latest committed step and its reservations in the order they were made.
func (s *Store) RecoverInFlight(ctx context.Context, sinceEpoch uint64) ([]InFlightRun, error) {
	since := int64(sinceEpoch)
	if sinceEpoch > 1<<63-1 {
		return []InFlightRun{}, nil // no epoch can exceed what SQLite stores
	}
	// One statement, one snapshot. It walks only reserved rows (a partial
	// index), however many committed steps the file holds.
	rows, err := s.db.QueryContext(ctx, `
		SELECT r.run_id, r.phase_id, r.epoch,
			(SELECT c.step_name FROM steps c
				WHERE c.run_id = r.run_id AND c.phase_id = r.phase_id AND c.state = 'committed'
				ORDER BY c.commit_seq DESC LIMIT 1),
			s.step_id, s.step_name, s.idempotency_key, s.reserved_at, s.expires_at
		FROM steps s INDEXED BY steps_reserved
		JOIN runs r ON r.run_id = s.run_id AND r.phase_id = s.phase_id
		WHERE s.state = 'reserved' AND r.epoch > ?
		ORDER BY r.epoch, s.reserved_at, s.step_id`, since)
	if err != nil {
		return nil, classify(ctx, "recover_in_flight", err)
	}
	defer rows.Close()
	out := []InFlightRun{}
	for rows.Next() {
		var run InFlightRun
		var epoch int64
		var last sql.NullString
		var res Reservation
		var reserved, expires int64
		if err := rows.Scan(&run.RunID, &run.PhaseID, &epoch, &last,
			&res.StepID, &res.StepName, &res.IdempotencyKey, &reserved, &expires); err != nil {
			return nil, classify(ctx, "recover_in_flight", err)
		}
		res.ReservedAt, res.ExpiresAt = fromNanos(reserved), fromNanos(expires)
		if n := len(out); n > 0 && out[n-1].RunID == run.RunID && out[n-1].PhaseID == run.PhaseID {
			out[n-1].Outstanding = append(out[n-1].Outstanding, res)
			continue
		}
		run.Epoch = uint64(epoch)
		run.LastCommittedStep, run.HasCommitted = last.String, last.Valid
		run.Outstanding = []Reservation{res}
		out = append(out, run)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(ctx, "recover_in_flight", err)
	}
	return out, nil
}
