package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// ErrNotEmpty is wrapped by Import's error when the namespace already
// holds queue data.
var ErrNotEmpty = errors.New("pgstore: import refused: the namespace already holds queue data")

// Import copies a dump (sqlitestore.Export) into this namespace in one
// transaction under the namespace lock: entries keep their ordinals, the
// audit trail its seq values, subjects their generation counters. It
// refuses, changing nothing, when the namespace holds any entry, audit
// row, finished entry, generation counter or binding. Afterwards the audit
// identity continues after the highest imported seq and state_counts
// matches the entries. Imported entries get this Store's project root.
//
// The per-row count trigger is switched off for the copy (inside the
// transaction, so no other session sees it off) and the counts are
// computed once: a million trigger updates of one row in one transaction
// would be quadratic. That needs the role to own the tables, as the role
// that migrated them does.
func (s *Store) Import(ctx context.Context, d *storage.Dump) error {
	if s.tx != nil {
		return errors.New("pgstore: Import runs its own transaction")
	}
	err := s.db.Tx(ctx, pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.begin); err != nil {
			return err
		}
		var used bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM entries) OR EXISTS (SELECT 1 FROM audit)
			OR EXISTS (SELECT 1 FROM finished_entries) OR EXISTS (SELECT 1 FROM subject_generations)
			OR EXISTS (SELECT 1 FROM idempotency_bindings)`).Scan(&used); err != nil {
			return fmt.Errorf("pgstore: import: %w", err)
		}
		if used {
			return fmt.Errorf("%w (schema %s); import only into a fresh namespace", ErrNotEmpty, s.db.Schema())
		}
		return importRows(ctx, tx, d, s.root)
	})
	return s.unavailable(err)
}

func importRows(ctx context.Context, tx pgx.Tx, d *storage.Dump, root string) error {
	if _, err := tx.Exec(ctx, `ALTER TABLE entries DISABLE TRIGGER entries_count_insert_delete`); err != nil {
		return fmt.Errorf("pgstore: import: %w", err)
	}
	copies := []struct {
		table string
		cols  []string
		n     int
		row   func(i int) []any
	}{
		{"entries", []string{"entry_id", "ordinal", "state", "subject_key", "task_id", "workflow_ref",
			"workflow_id", "enqueued_at", "assigned_at", "held_at", "run_at", "run_at_ns", "expire_after_secs",
			"expire_at_ns", "lease_expires_ns", "dispatch", "assigned_at_ns", "qualified_id", "subject_generation",
			"workflow_generation", "lease_owner", "lease_generation", "lease_expires_at", "repo_url",
			"repo_base_ref", "repo_head_ref", "repo_collision_key", "project_root"}, len(d.Entries), func(i int) []any {
			e := d.Entries[i]
			return []any{e.ID, e.Ordinal, e.State, e.SubjectKey, e.TaskID, e.WorkflowRef, e.WorkflowID,
				e.EnqueuedAt, e.AssignedAt, e.HeldAt, e.RunAt, e.RunAtNS, e.ExpireAfterSecs, e.ExpireAtNS,
				e.LeaseExpiresNS, string(e.Dispatch), e.AssignedAtNS, e.QualifiedID, e.SubjectGeneration,
				e.WorkflowGeneration, e.LeaseOwner, e.LeaseGeneration, e.LeaseExpiresAt, e.RepoURL,
				e.RepoBaseRef, e.RepoHeadRef, e.RepoCollisionKey, root}
		}},
		{"audit", []string{"seq", "entry_id", "subject_key", "at", "at_ns", "method", "from_status",
			"to_status", "workflow_id", "reason"}, len(d.Audit), func(i int) []any {
			a := d.Audit[i]
			return []any{a.Seq, a.EntryID, a.SubjectKey, a.At, a.AtNS, a.Method, a.From, a.To, a.WorkflowID, a.Reason}
		}},
		{"finished_entries", []string{"entry_id", "subject_key", "qualified_id", "subject_generation",
			"workflow_id", "workflow_generation", "lease_owner", "lease_generation", "lease_expires_at",
			"repo_url", "repo_base_ref", "repo_head_ref", "outcome", "finished_at", "finished_by"}, len(d.Finished), func(i int) []any {
			f := d.Finished[i]
			return []any{f.ID, f.SubjectKey, f.QualifiedID, f.SubjectGeneration, f.WorkflowID, f.WorkflowGeneration,
				f.LeaseOwner, f.LeaseGeneration, f.LeaseExpiresAt, f.RepoURL, f.RepoBaseRef, f.RepoHeadRef,
				f.Outcome, f.FinishedAt, f.FinishedBy}
		}},
		{"subject_generations", []string{"qualified_id", "last_generation"}, len(d.Generations), func(i int) []any {
			return []any{d.Generations[i].QualifiedID, d.Generations[i].LastGeneration}
		}},
		{"idempotency_bindings", []string{"idem_key", "entry_id", "request_hash", "bound_at"}, len(d.Bindings), func(i int) []any {
			b := d.Bindings[i]
			return []any{b.Key, b.EntryID, b.RequestHash, b.BoundAt}
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
	for _, q := range []string{
		`ALTER TABLE entries ENABLE TRIGGER entries_count_insert_delete`,
		`UPDATE state_counts c SET n = (SELECT COUNT(*) FROM entries e WHERE e.state = c.state)`,
		`SELECT setval(pg_get_serial_sequence('audit', 'seq'), COALESCE(MAX(seq), 1), MAX(seq) IS NOT NULL) FROM audit`,
		`ANALYZE entries`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("pgstore: import: %w", err)
		}
	}
	return nil
}
