package sqlitestore

import (
	"context"
	"fmt"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// Export reads every row of the queue database in one read snapshot, for
// an operator moving the queue to another backend (pgstore's Import).
func Export(ctx context.Context, s *Store) (*storage.Dump, error) {
	var d storage.Dump
	err := s.View(ctx, func(tx storage.Store) error {
		q := tx.(*Store).q
		var err error
		if d.Entries, err = exportEntries(ctx, q); err != nil {
			return err
		}
		if d.Audit, err = exportAudit(ctx, q); err != nil {
			return err
		}
		if d.Finished, err = exportFinished(ctx, q); err != nil {
			return err
		}
		if d.Generations, err = exportGenerations(ctx, q); err != nil {
			return err
		}
		d.Bindings, err = exportBindings(ctx, q)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return &d, nil
}

func exportEntries(ctx context.Context, q sqlitex.Querier) ([]*storage.Entry, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+entryColumns+` FROM entries ORDER BY ordinal`)
	if err != nil {
		return nil, fmt.Errorf("entries: %w", err)
	}
	return collect(rows)
}

func exportAudit(ctx context.Context, q sqlitex.Querier) ([]storage.Audit, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return collectAudit(rows)
}

func exportFinished(ctx context.Context, q sqlitex.Querier) ([]storage.FinishedRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+finishedColumns+` FROM finished_entries ORDER BY entry_id`)
	if err != nil {
		return nil, fmt.Errorf("finished entries: %w", err)
	}
	defer rows.Close()
	var out []storage.FinishedRow
	for rows.Next() {
		f, err := scanFinished(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("finished entries: %w", err)
		}
		out = append(out, *f)
	}
	return out, rows.Err()
}

func exportGenerations(ctx context.Context, q sqlitex.Querier) ([]storage.Generation, error) {
	rows, err := q.QueryContext(ctx, `SELECT qualified_id, last_generation FROM subject_generations ORDER BY qualified_id`)
	if err != nil {
		return nil, fmt.Errorf("subject generations: %w", err)
	}
	defer rows.Close()
	var out []storage.Generation
	for rows.Next() {
		var g storage.Generation
		if err := rows.Scan(&g.QualifiedID, &g.LastGeneration); err != nil {
			return nil, fmt.Errorf("subject generations: %w", err)
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

func exportBindings(ctx context.Context, q sqlitex.Querier) ([]storage.BindingRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT idem_key, entry_id, request_hash, bound_at FROM idempotency_bindings ORDER BY idem_key`)
	if err != nil {
		return nil, fmt.Errorf("idempotency bindings: %w", err)
	}
	defer rows.Close()
	var out []storage.BindingRow
	for rows.Next() {
		var b storage.BindingRow
		if err := rows.Scan(&b.Key, &b.EntryID, &b.RequestHash, &b.BoundAt); err != nil {
			return nil, fmt.Errorf("idempotency bindings: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
