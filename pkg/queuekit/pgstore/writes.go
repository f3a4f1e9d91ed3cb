package pgstore

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
			lease_expires_at, repo_url, repo_base_ref, repo_head_ref, repo_collision_key, project_root)
		VALUES ($1, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM entries), $2, $3, $4, $5, $6, $7, $8, $9,
			$10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27)
		RETURNING ordinal`
	// One statement for the whole sweep: delete the expired pending
	// entries, audit each (in expiry order, as SQLite's index walk does)
	// and keep the ticketed ones as finished.
	sqlSweep = `WITH gone AS (
			DELETE FROM entries WHERE state = 'pending' AND expire_at_ns < $1 RETURNING *
		), audited AS (
			INSERT INTO audit (entry_id, subject_key, at, at_ns, method, from_status, to_status, workflow_id, reason)
			SELECT entry_id, subject_key, $2, $1, $3, 'pending', 'expired', NULL, 'expire_after_secs elapsed after run_at'
			FROM gone ORDER BY expire_at_ns, ordinal
			RETURNING 1
		), kept AS (
			INSERT INTO finished_entries ` + finishColumns + `
			SELECT ` + finishSelect + `, 'dropped', $2, 'expiry-sweep'
			FROM gone WHERE subject_generation IS NOT NULL
		)
		SELECT COUNT(*) FROM audited`
)

// Insert appends e at the tail of the queue (e.Ordinal is set) and records
// the Store's project root with it.
func (s *Store) Insert(ctx context.Context, e *storage.Entry) error {
	err := s.runner().QueryRow(ctx, sqlInsert,
		e.ID, e.State, e.SubjectKey, e.TaskID, e.WorkflowRef, e.WorkflowID, e.EnqueuedAt, e.AssignedAt,
		e.HeldAt, e.RunAt, e.RunAtNS, e.ExpireAfterSecs, e.ExpireAtNS, e.LeaseExpiresNS, string(e.Dispatch),
		e.AssignedAtNS, e.QualifiedID, e.SubjectGeneration, e.WorkflowGeneration, e.LeaseOwner,
		e.LeaseGeneration, e.LeaseExpiresAt, e.RepoURL, e.RepoBaseRef, e.RepoHeadRef, e.RepoCollisionKey, s.root,
	).Scan(&e.Ordinal)
	if err != nil {
		return fmt.Errorf("store: insert entry: %w", err)
	}
	return nil
}

// Save writes the fields a status transition changes.
func (s *Store) Save(ctx context.Context, e *storage.Entry) error {
	_, err := s.runner().Exec(ctx, `UPDATE entries SET state = $1, workflow_id = $2, assigned_at = $3,
		held_at = $4, lease_expires_ns = $5, assigned_at_ns = $6, qualified_id = $7, subject_generation = $8,
		workflow_generation = $9, lease_owner = $10, lease_generation = $11, lease_expires_at = $12
		WHERE entry_id = $13`,
		e.State, e.WorkflowID, e.AssignedAt, e.HeldAt, e.LeaseExpiresNS, e.AssignedAtNS, e.QualifiedID,
		e.SubjectGeneration, e.WorkflowGeneration, e.LeaseOwner, e.LeaseGeneration, e.LeaseExpiresAt, e.ID)
	if err != nil {
		return fmt.Errorf("store: save entry: %w", err)
	}
	return nil
}

// Delete removes a live entry.
func (s *Store) Delete(ctx context.Context, id string) error {
	if _, err := s.runner().Exec(ctx, `DELETE FROM entries WHERE entry_id = $1`, id); err != nil {
		return fmt.Errorf("store: delete entry: %w", err)
	}
	return nil
}

// SetOrdinal moves an entry to a queue position.
func (s *Store) SetOrdinal(ctx context.Context, id string, ordinal int64) error {
	if _, err := s.runner().Exec(ctx, `UPDATE entries SET ordinal = $1 WHERE entry_id = $2`, ordinal, id); err != nil {
		return fmt.Errorf("store: set ordinal: %w", err)
	}
	return nil
}

// SweepExpired removes the pending entries whose expiry instant is
// strictly before nowNS, recording each in the audit trail as expired
// (and a ticketed one as finished, dropped). It returns how many went.
func (s *Store) SweepExpired(ctx context.Context, nowNS int64, at, method string) (int64, error) {
	var n int64
	if err := s.runner().QueryRow(ctx, sqlSweep, nowNS, at, method).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: sweep: %w", err)
	}
	return n, nil
}
