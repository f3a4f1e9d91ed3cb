package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// Record appends a to the audit trail.
func (s *Store) Record(ctx context.Context, a storage.Audit) error {
	_, err := s.runner().Exec(ctx, `INSERT INTO audit (entry_id, subject_key, at, at_ns, method,
		from_status, to_status, workflow_id, reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		a.EntryID, a.SubjectKey, a.At, a.AtNS, a.Method, a.From, a.To, a.WorkflowID, a.Reason)
	if err != nil {
		return fmt.Errorf("store: audit: %w", err)
	}
	return nil
}

const sqlPruneAudit = `DELETE FROM audit WHERE seq IN (
	SELECT a.seq FROM audit a WHERE a.at_ns < $1
	AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.entry_id = a.entry_id)
	ORDER BY a.at_ns LIMIT $2)`

// PruneAudit deletes up to limit audit rows older than cutoffNS that
// belong to entries no longer in the queue. Bounded, so a large backlog is
// worked off a little per call.
func (s *Store) PruneAudit(ctx context.Context, cutoffNS int64, limit int) error {
	if _, err := s.runner().Exec(ctx, sqlPruneAudit, cutoffNS, limitArg(int64(limit))); err != nil {
		return fmt.Errorf("store: prune audit: %w", err)
	}
	return nil
}

const auditColumns = `seq, entry_id, subject_key, at, at_ns, method, from_status, to_status, workflow_id, reason`

// AuditTrail returns the last limit transitions, oldest first: of one entry
// when entryID is set, else of the whole queue.
func (s *Store) AuditTrail(ctx context.Context, entryID string, limit int) ([]storage.Audit, error) {
	q := `SELECT ` + auditColumns + ` FROM audit`
	args := []any{}
	if entryID != "" {
		q += ` WHERE entry_id = $1 ORDER BY seq DESC LIMIT $2`
		args = append(args, entryID)
	} else {
		q += ` ORDER BY seq DESC LIMIT $1`
	}
	out, err := collectAudit(s.runner().Query(ctx, q, append(args, limitArg(int64(limit)))...))
	if err != nil {
		return nil, fmt.Errorf("store: audit trail: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

func collectAudit(rows pgx.Rows, err error) ([]storage.Audit, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []storage.Audit
	for rows.Next() {
		var a storage.Audit
		if err := rows.Scan(&a.Seq, &a.EntryID, &a.SubjectKey, &a.At, &a.AtNS, &a.Method, &a.From, &a.To,
			&a.WorkflowID, &a.Reason); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
