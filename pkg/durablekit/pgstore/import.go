package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
)

// ErrNotEmpty is wrapped by Import's error when the namespace already
// holds a run or a step.
var ErrNotEmpty = errors.New("pgstore: import refused: the namespace already holds durable runs or steps")

// Import copies a dump (sqlitestore.Export) into this namespace in one
// transaction under the namespace lock: every run and every step row in
// every state, column for column. It refuses, changing nothing, when the
// namespace holds any run or step. Afterwards the meta counters are at
// least the dump's and above every imported epoch and commit sequence
// number (never below what the namespace had), so the next
// begin_workflow_run and commit_step continue above the imported ones.
func (s *Store) Import(ctx context.Context, d *storage.Dump) error {
	if s.tx != nil {
		return errors.New("pgstore: Import runs its own transaction")
	}
	var fnErr error
	err := s.db.Tx(ctx, pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		fnErr = nil
		if _, err := tx.Exec(ctx, s.begin); err != nil {
			return err
		}
		var used bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs) OR EXISTS (SELECT 1 FROM steps)`).Scan(&used); err != nil {
			return err
		}
		if used {
			fnErr = fmt.Errorf("%w (schema %s); import only into a fresh namespace", ErrNotEmpty, s.db.Schema())
			return fnErr
		}
		return importRows(ctx, tx, d)
	})
	return wrap("import", err, fnErr)
}

func importRows(ctx context.Context, tx pgx.Tx, d *storage.Dump) error {
	copies := []struct {
		table string
		cols  []string
		n     int
		row   func(i int) []any
	}{
		{"runs", []string{"run_id", "phase_id", "epoch", "inputs_json", "created_at", "updated_at"}, len(d.Runs), func(i int) []any {
			r := d.Runs[i]
			return []any{r.RunID, r.PhaseID, r.Epoch, nullable(r.Inputs), nanos(r.CreatedAt), nanos(r.UpdatedAt)}
		}},
		{"steps", []string{"step_id", "run_id", "phase_id", "step_name", "idempotency_key", "state",
			"payload_json", "reserved_at", "expires_at", "outcome", "output_json", "error_json", "committed_at",
			"commit_seq", "released_at", "release_reason", "superseded_by"}, len(d.Steps), func(i int) []any {
			r := d.Steps[i]
			var outcome *string
			if r.Outcome != "" {
				outcome = &r.Outcome
			}
			return []any{r.ID, r.RunID, r.PhaseID, r.StepName, r.IdempotencyKey, string(r.State),
				nullable(r.Payload), nanos(r.ReservedAt), nanos(r.ExpiresAt), outcome, nullable(r.Output),
				nullable(r.Error), nanosOf(r.CommittedAt), r.CommitSeq, nanosOf(r.ReleasedAt), r.ReleaseReason,
				r.SupersededBy}
		}},
	}
	for _, c := range copies {
		n, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromSlice(c.n, func(i int) ([]any, error) {
			return c.row(i), nil
		}))
		if err != nil {
			return fmt.Errorf("pgstore: import %s: %w", c.table, err)
		}
		if n != int64(c.n) {
			return fmt.Errorf("pgstore: import %s: copied %d rows of %d", c.table, n, c.n)
		}
	}
	// Counters never go down, and never stay below an imported row.
	if _, err := tx.Exec(ctx, `UPDATE meta SET
		last_epoch = GREATEST(last_epoch, $1, (SELECT coalesce(max(epoch), 0) FROM runs)),
		last_commit_seq = GREATEST(last_commit_seq, $2, (SELECT coalesce(max(commit_seq), 0) FROM steps))
		WHERE id = 1`, d.LastEpoch, d.LastCommitSeq); err != nil {
		return fmt.Errorf("pgstore: import counters: %w", err)
	}
	for _, q := range []string{`ANALYZE runs`, `ANALYZE steps`} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("pgstore: import: %w", err)
		}
	}
	return nil
}

func nanosOf(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	n := nanos(*t)
	return &n
}
