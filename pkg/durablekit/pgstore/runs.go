package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
)

// NextEpoch bumps the namespace-wide counter in meta: it only grows, which
// is why a restart never hands out an epoch twice. Under the namespace lock
// (Update) epochs are allocated in commit order; the row lock on meta
// orders even an unbound call.
func (s *Store) NextEpoch(ctx context.Context) (int64, error) {
	var epoch int64
	if err := s.runner().QueryRow(ctx,
		`UPDATE meta SET last_epoch = last_epoch + 1 WHERE id = 1 RETURNING last_epoch`).Scan(&epoch); err != nil {
		return 0, backend("next epoch", err)
	}
	return epoch, nil
}

// UpsertRun records a run at epoch, keeping its first non-null inputs.
func (s *Store) UpsertRun(ctx context.Context, runID, phaseID string, epoch int64, inputs []byte, now time.Time) error {
	_, err := s.runner().Exec(ctx, `
		INSERT INTO runs (run_id, phase_id, epoch, inputs_json, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5)
		ON CONFLICT (run_id, phase_id) DO UPDATE SET
			epoch = excluded.epoch,
			inputs_json = coalesce(runs.inputs_json, excluded.inputs_json),
			updated_at = excluded.updated_at`,
		runID, phaseID, epoch, nullable(inputs), nanos(now))
	if err != nil {
		return backend("upsert run", err)
	}
	return nil
}

// RunExists reports whether begin_workflow_run registered the run.
func (s *Store) RunExists(ctx context.Context, runID, phaseID string) (bool, error) {
	var one int
	err := s.runner().QueryRow(ctx, `SELECT 1 FROM runs WHERE run_id = $1 AND phase_id = $2`, runID, phaseID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, backend("run exists", err)
	}
	return true, nil
}

// sqlCommittedSteps reads the run's existence and its commits in one
// statement: the LEFT JOIN yields one all-NULL step row for a run with no
// commits. The inner side is a range of the partial index steps_commits.
const sqlCommittedSteps = `
	SELECT s.step_id, s.step_name, s.idempotency_key, s.outcome, s.committed_at, s.output_json, s.error_json
	FROM runs r
	LEFT JOIN steps s
		ON s.run_id = r.run_id AND s.phase_id = r.phase_id AND s.state = 'committed'
	WHERE r.run_id = $1 AND r.phase_id = $2
	ORDER BY s.commit_seq`

// CommittedSteps are a run's committed steps in commit order; found is
// false when the run does not exist.
func (s *Store) CommittedSteps(ctx context.Context, runID, phaseID string) ([]storage.StepRecord, bool, error) {
	rows, err := s.runner().Query(ctx, sqlCommittedSteps, runID, phaseID)
	if err != nil {
		return nil, false, backend("committed steps", err)
	}
	defer rows.Close()
	found := false
	out := []storage.StepRecord{}
	for rows.Next() {
		found = true
		var id, name, key, outcome, output, errJSON *string
		var committed *int64
		if err := rows.Scan(&id, &name, &key, &outcome, &committed, &output, &errJSON); err != nil {
			return nil, false, backend("committed steps", err)
		}
		if id == nil {
			continue // the run exists and has no commits
		}
		out = append(out, storage.StepRecord{
			StepID: *id, StepName: str(name), IdempotencyKey: str(key), Outcome: str(outcome),
			CommittedAt: fromNanos(*committed), Output: bytesOf(output), Error: bytesOf(errJSON),
		})
	}
	if err := rows.Err(); err != nil {
		return nil, false, backend("committed steps", err)
	}
	return out, found, nil
}

// sqlInFlight walks only reserved rows (the partial index steps_reserved),
// however many committed steps the namespace holds, in one statement; each
// run's latest commit is one backward probe of steps_commits. Ties of
// reserved_at are broken by step_id in byte order (COLLATE "C"), as
// SQLite's BINARY collation does.
const sqlInFlight = `
	SELECT r.run_id, r.phase_id, r.epoch,
		(SELECT c.step_name FROM steps c
			WHERE c.run_id = r.run_id AND c.phase_id = r.phase_id AND c.state = 'committed'
			ORDER BY c.commit_seq DESC LIMIT 1),
		s.step_id, s.step_name, s.idempotency_key, s.reserved_at, s.expires_at
	FROM steps s
	JOIN runs r ON r.run_id = s.run_id AND r.phase_id = s.phase_id
	WHERE s.state = 'reserved' AND r.epoch > $1
	ORDER BY r.epoch, s.reserved_at, s.step_id COLLATE "C"`

// InFlight is every run above sinceEpoch with outstanding reservations, in
// epoch order, each with its reservations in the order they were made.
func (s *Store) InFlight(ctx context.Context, sinceEpoch int64) ([]storage.InFlightRun, error) {
	rows, err := s.runner().Query(ctx, sqlInFlight, sinceEpoch)
	if err != nil {
		return nil, backend("in flight", err)
	}
	defer rows.Close()
	out := []storage.InFlightRun{}
	for rows.Next() {
		var run storage.InFlightRun
		var epoch int64
		var last *string
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
		run.LastCommittedStep, run.HasCommitted = str(last), last != nil
		run.Outstanding = []storage.Reservation{res}
		out = append(out, run)
	}
	if err := rows.Err(); err != nil {
		return nil, backend("in flight", err)
	}
	return out, nil
}
