package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// Export reads every row of the step log in one read snapshot, for an
// operator moving it to another backend (pgstore's Import).
func Export(ctx context.Context, s *Store) (*storage.Dump, error) {
	var d storage.Dump
	err := s.View(ctx, func(tx storage.Store) error {
		q := tx.(*Store).q
		if err := q.QueryRowContext(ctx, `SELECT last_epoch, last_commit_seq FROM meta WHERE id = 1`).
			Scan(&d.LastEpoch, &d.LastCommitSeq); err != nil {
			return fmt.Errorf("meta: %w", err)
		}
		var err error
		if d.Runs, err = exportRuns(ctx, q); err != nil {
			return err
		}
		d.Steps, err = exportSteps(ctx, q)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return &d, nil
}

func exportRuns(ctx context.Context, q sqlitex.Querier) ([]storage.RunRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT run_id, phase_id, epoch, inputs_json, created_at, updated_at
		FROM runs ORDER BY run_id, phase_id`)
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	defer rows.Close()
	var out []storage.RunRow
	for rows.Next() {
		var r storage.RunRow
		var inputs sql.NullString
		var created, updated int64
		if err := rows.Scan(&r.RunID, &r.PhaseID, &r.Epoch, &inputs, &created, &updated); err != nil {
			return nil, fmt.Errorf("runs: %w", err)
		}
		r.Inputs, r.CreatedAt, r.UpdatedAt = bytesOf(inputs), fromNanos(created), fromNanos(updated)
		out = append(out, r)
	}
	return out, rows.Err()
}

func exportSteps(ctx context.Context, q sqlitex.Querier) ([]storage.StepRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT step_id, run_id, phase_id, step_name, idempotency_key, state,
		payload_json, reserved_at, expires_at, outcome, output_json, error_json, committed_at, commit_seq,
		released_at, release_reason, superseded_by
		FROM steps ORDER BY step_id`)
	if err != nil {
		return nil, fmt.Errorf("steps: %w", err)
	}
	defer rows.Close()
	var out []storage.StepRow
	for rows.Next() {
		var (
			r                                 storage.StepRow
			state                             string
			reserved, expires                 int64
			payload, outcome, output, errJSON sql.NullString
			committed, seq, released          sql.NullInt64
			reason, by                        sql.NullString
		)
		if err := rows.Scan(&r.ID, &r.RunID, &r.PhaseID, &r.StepName, &r.IdempotencyKey, &state,
			&payload, &reserved, &expires, &outcome, &output, &errJSON, &committed, &seq,
			&released, &reason, &by); err != nil {
			return nil, fmt.Errorf("steps: %w", err)
		}
		r.State, r.Payload = storage.State(state), bytesOf(payload)
		r.ReservedAt, r.ExpiresAt = fromNanos(reserved), fromNanos(expires)
		r.Outcome, r.Output, r.Error = outcome.String, bytesOf(output), bytesOf(errJSON)
		if committed.Valid {
			t := fromNanos(committed.Int64)
			r.CommittedAt = &t
		}
		if seq.Valid {
			r.CommitSeq = &seq.Int64
		}
		if released.Valid {
			t := fromNanos(released.Int64)
			r.ReleasedAt = &t
		}
		if reason.Valid {
			r.ReleaseReason = &reason.String
		}
		if by.Valid {
			r.SupersededBy = &by.String
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
