package sqlitestore

import (
	"context"
	"fmt"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// The hot write statements (see the read ones in entries.go).
const (
	sqlInsert = `INSERT INTO entries (entry_id, ordinal, state, subject_key, task_id,
			workflow_ref, workflow_id, enqueued_at, assigned_at, held_at, run_at, run_at_ns,
			expire_after_secs, expire_at_ns, lease_expires_ns, dispatch, assigned_at_ns,
			qualified_id, subject_generation, workflow_generation, lease_owner, lease_generation,
			lease_expires_at, repo_url, repo_base_ref, repo_head_ref, repo_collision_key)
		VALUES (?, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM entries), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
			?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING ordinal`
	sqlSweepAudit = `INSERT INTO audit (entry_id, subject_key, at, at_ns, method,
			from_status, to_status, workflow_id, reason)
		SELECT entry_id, subject_key, ?, ?, ?, 'pending', 'expired', NULL, 'expire_after_secs elapsed after run_at'
		FROM entries WHERE state = 'pending' AND expire_at_ns < ?`
	sqlSweepFinish = `INSERT INTO finished_entries ` + finishColumns + `
		SELECT ` + finishSelect + `, 'dropped', ?, 'expiry-sweep'
		FROM entries WHERE state = 'pending' AND expire_at_ns < ? AND subject_generation IS NOT NULL`
	sqlSweepDelete = `DELETE FROM entries WHERE state = 'pending' AND expire_at_ns < ?`
)

// Insert appends e at the tail of the queue (e.Ordinal is set).
func (s *Store) Insert(ctx context.Context, e *storage.Entry) error {
	err := s.q.QueryRowContext(ctx, sqlInsert,
		e.ID, e.State, e.SubjectKey, e.TaskID, e.WorkflowRef, e.WorkflowID, e.EnqueuedAt, e.AssignedAt,
		e.HeldAt, e.RunAt, e.RunAtNS, e.ExpireAfterSecs, e.ExpireAtNS, e.LeaseExpiresNS, string(e.Dispatch),
		e.AssignedAtNS, e.QualifiedID, e.SubjectGeneration, e.WorkflowGeneration, e.LeaseOwner,
		e.LeaseGeneration, e.LeaseExpiresAt, e.RepoURL, e.RepoBaseRef, e.RepoHeadRef, e.RepoCollisionKey,
	).Scan(&e.Ordinal)
	if err != nil {
		return fmt.Errorf("store: insert entry: %w", err)
	}
	return nil
}

// Save writes the fields a status transition changes.
func (s *Store) Save(ctx context.Context, e *storage.Entry) error {
	_, err := s.q.ExecContext(ctx, `UPDATE entries SET state = ?, workflow_id = ?, assigned_at = ?,
		held_at = ?, lease_expires_ns = ?, assigned_at_ns = ?, qualified_id = ?, subject_generation = ?,
		workflow_generation = ?, lease_owner = ?, lease_generation = ?, lease_expires_at = ?
		WHERE entry_id = ?`,
		e.State, e.WorkflowID, e.AssignedAt, e.HeldAt, e.LeaseExpiresNS, e.AssignedAtNS, e.QualifiedID,
		e.SubjectGeneration, e.WorkflowGeneration, e.LeaseOwner, e.LeaseGeneration, e.LeaseExpiresAt, e.ID)
	if err != nil {
		return fmt.Errorf("store: save entry: %w", err)
	}
	return nil
}

// Delete removes a live entry (completion, drop).
func (s *Store) Delete(ctx context.Context, id string) error {
	if _, err := s.q.ExecContext(ctx, `DELETE FROM entries WHERE entry_id = ?`, id); err != nil {
		return fmt.Errorf("store: delete entry: %w", err)
	}
	return nil
}

// SetOrdinal moves an entry to a queue position.
func (s *Store) SetOrdinal(ctx context.Context, id string, ordinal int64) error {
	if _, err := s.q.ExecContext(ctx, `UPDATE entries SET ordinal = ? WHERE entry_id = ?`, ordinal, id); err != nil {
		return fmt.Errorf("store: set ordinal: %w", err)
	}
	return nil
}

// SweepExpired removes the pending entries whose expiry instant is strictly
// before nowNS, recording each in the audit trail as expired. It returns how
// many went.
func (s *Store) SweepExpired(ctx context.Context, nowNS int64, at, method string) (int64, error) {
	res, err := s.q.ExecContext(ctx, sqlSweepAudit,
		at, nowNS, method, nowNS)
	if err != nil {
		return 0, fmt.Errorf("store: sweep audit: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return 0, err
	}
	if _, err := s.q.ExecContext(ctx, sqlSweepFinish, at, nowNS); err != nil {
		return 0, fmt.Errorf("store: sweep finish: %w", err)
	}
	if _, err := s.q.ExecContext(ctx, sqlSweepDelete, nowNS); err != nil {
		return 0, fmt.Errorf("store: sweep: %w", err)
	}
	return n, nil
}
