package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// Record appends a to the audit trail.
func (s *Store) Record(ctx context.Context, a storage.Audit) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO audit (entry_id, subject_key, at, at_ns, method,
		from_status, to_status, workflow_id, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.EntryID, a.SubjectKey, a.At, a.AtNS, a.Method, a.From, a.To, a.WorkflowID, a.Reason)
	if err != nil {
		return fmt.Errorf("store: audit: %w", err)
	}
	return nil
}

const sqlPruneAudit = `DELETE FROM audit WHERE seq IN (
	SELECT a.seq FROM audit a WHERE a.at_ns < ?
	AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.entry_id = a.entry_id)
	ORDER BY a.at_ns LIMIT ?)`

// PruneAudit deletes up to limit audit rows older than cutoffNS that belong
// to entries no longer in the queue. Bounded, so a large backlog is worked
// off a little per call instead of stalling one.
func (s *Store) PruneAudit(ctx context.Context, cutoffNS int64, limit int) error {
	_, err := s.q.ExecContext(ctx, sqlPruneAudit, cutoffNS, limit)
	if err != nil {
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
		q += ` WHERE entry_id = ?`
		args = append(args, entryID)
	}
	q += ` ORDER BY seq DESC LIMIT ?`
	rows, err := s.q.QueryContext(ctx, q, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: audit trail: %w", err)
	}
	out, err := collectAudit(rows)
	if err != nil {
		return nil, fmt.Errorf("store: audit trail: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// collectAudit reads audit rows selected as auditColumns.
func collectAudit(rows *sql.Rows) ([]storage.Audit, error) {
	defer rows.Close()
	var out []storage.Audit
	for rows.Next() {
		var a storage.Audit
		var from, wf, reason sql.NullString
		if err := rows.Scan(&a.Seq, &a.EntryID, &a.SubjectKey, &a.At, &a.AtNS, &a.Method, &from, &a.To, &wf, &reason); err != nil {
			return nil, err
		}
		a.From, a.WorkflowID, a.Reason = str(from), str(wf), str(reason)
		out = append(out, a)
	}
	return out, rows.Err()
}
