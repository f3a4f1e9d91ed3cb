package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// Storage of the generation-fenced surface (queue 0.4.0): finished
// records, idempotency bindings, subject counters and the v2 lookups.

const (
	finishColumns = `(entry_id, subject_key, qualified_id, subject_generation, workflow_id,
		workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url,
		repo_base_ref, repo_head_ref, outcome, finished_at, finished_by)`
	finishSelect = `entry_id, subject_key, qualified_id, subject_generation, workflow_id,
		workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url,
		repo_base_ref, repo_head_ref`
)

// sqlFinish deletes a live entry and, when it is ticketed, keeps it in
// finished_entries with its fence: one statement, one round trip.
const sqlFinish = `WITH gone AS (DELETE FROM entries WHERE entry_id = $1 RETURNING *)
	INSERT INTO finished_entries ` + finishColumns + `
	SELECT ` + finishSelect + `, $2, $3, $4 FROM gone WHERE subject_generation IS NOT NULL`

// Finish removes a live entry (completion, drop). A ticketed entry is kept
// in finished_entries with its fence and outcome; an old-style one only
// in the audit trail.
func (s *Store) Finish(ctx context.Context, id, outcome, at, by string) error {
	if _, err := s.runner().Exec(ctx, sqlFinish, id, outcome, at, by); err != nil {
		return fmt.Errorf("store: finish entry: %w", err)
	}
	return nil
}

// GetFinished returns the finished record of an entry, or nil.
func (s *Store) GetFinished(ctx context.Context, id string) (*storage.Finished, error) {
	var f storage.Finished
	err := s.runner().QueryRow(ctx, `SELECT entry_id, qualified_id, subject_generation, workflow_id,
		workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url, repo_base_ref,
		repo_head_ref, outcome, finished_by FROM finished_entries WHERE entry_id = $1`, id).Scan(
		&f.ID, &f.QualifiedID, &f.SubjectGeneration, &f.WorkflowID, &f.WorkflowGeneration, &f.LeaseOwner,
		&f.LeaseGeneration, &f.LeaseExpiresAt, &f.RepoURL, &f.RepoBaseRef, &f.RepoHeadRef, &f.Outcome, &f.FinishedBy)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get finished: %w", err)
	}
	return &f, nil
}

// GetBinding returns the binding of key, or nil.
func (s *Store) GetBinding(ctx context.Context, key string) (*storage.Binding, error) {
	var b storage.Binding
	err := s.runner().QueryRow(ctx, `SELECT entry_id, request_hash FROM idempotency_bindings WHERE idem_key = $1`, key).
		Scan(&b.EntryID, &b.RequestHash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get binding: %w", err)
	}
	return &b, nil
}

// Bind binds key to an entry forever.
func (s *Store) Bind(ctx context.Context, key, entryID, hash, at string) error {
	_, err := s.runner().Exec(ctx, `INSERT INTO idempotency_bindings (idem_key, entry_id, request_hash, bound_at)
		VALUES ($1, $2, $3, $4)`, key, entryID, hash, at)
	if err != nil {
		return fmt.Errorf("store: bind key: %w", err)
	}
	return nil
}

// sqlNextGeneration allocates and records, in one statement, one above
// both the recorded counter and the highest live generation of $1.
const sqlNextGeneration = `INSERT INTO subject_generations AS g (qualified_id, last_generation)
	VALUES ($1, GREATEST(
		COALESCE((SELECT last_generation FROM subject_generations WHERE qualified_id = $1), 0),
		COALESCE((SELECT MAX(subject_generation) FROM entries WHERE qualified_id = $1), 0)) + 1)
	ON CONFLICT (qualified_id) DO UPDATE SET last_generation = EXCLUDED.last_generation
	RETURNING g.last_generation`

// NextGeneration allocates the next subject generation of qid: one above
// both the recorded counter and the highest live generation, recorded.
func (s *Store) NextGeneration(ctx context.Context, qid string) (int64, error) {
	var next int64
	if err := s.runner().QueryRow(ctx, sqlNextGeneration, qid).Scan(&next); err != nil {
		return 0, fmt.Errorf("store: next generation: %w", err)
	}
	return next, nil
}

// SetIdentity gives an old-style entry its canonical id and generation.
func (s *Store) SetIdentity(ctx context.Context, id, qid string, generation int64) error {
	_, err := s.runner().Exec(ctx, `UPDATE entries SET qualified_id = $1, subject_generation = $2 WHERE entry_id = $3`,
		qid, generation, id)
	if err != nil {
		return fmt.Errorf("store: set identity: %w", err)
	}
	return nil
}

// The v2 lookups, named so plan_test.go can hold them to their indexes.
const (
	sqlLiveTicketed = `SELECT ` + entryColumns + ` FROM entries
		WHERE qualified_id = $1 AND subject_generation IS NOT NULL ORDER BY subject_generation DESC LIMIT 1`
	sqlOldStyleOf = `SELECT ` + entryColumns + ` FROM entries
		WHERE (qualified_id = $1 OR qualified_id IS NULL) AND state IN ('pending', 'held')
		AND subject_generation IS NULL ORDER BY ordinal`
	// The row-lock clause is appended in a write transaction.
	sqlV2Candidates = `SELECT ` + entryColumns + ` FROM entries
		WHERE state = 'pending' AND (run_at_ns IS NULL OR run_at_ns <= $1) ORDER BY ordinal LIMIT $2`
	sqlCollision = `SELECT ` + entryColumns + ` FROM entries
		WHERE repo_collision_key = $1 AND state = 'assigned' AND subject_generation IS NOT NULL
		ORDER BY assigned_at_ns NULLS FIRST LIMIT 1`
)

// LiveTicketed returns the live ticketed entry of qid with the highest
// generation, or nil.
func (s *Store) LiveTicketed(ctx context.Context, qid string) (*storage.Entry, error) {
	return s.one(ctx, "live ticketed", sqlLiveTicketed, qid)
}

// OldStyleOf returns, in queue order, the pending and held old-style
// entries that may be of qid: those stored with it and those without a
// canonical id (the caller decides from the dispatch).
func (s *Store) OldStyleOf(ctx context.Context, qid string) ([]*storage.Entry, error) {
	out, err := collect(s.runner().Query(ctx, sqlOldStyleOf, qid))
	if err != nil {
		return nil, fmt.Errorf("store: old-style of subject: %w", err)
	}
	return out, nil
}

// V2Candidates returns up to limit due pending entries in queue order,
// ticketed or not; in a write transaction rows another transaction holds
// are skipped (FOR UPDATE SKIP LOCKED).
func (s *Store) V2Candidates(ctx context.Context, nowNS int64, limit int) ([]*storage.Entry, error) {
	out, err := collect(s.runner().Query(ctx, sqlV2Candidates+s.forUpdate(), nowNS, limitArg(int64(limit))))
	if err != nil {
		return nil, fmt.Errorf("store: v2 candidates: %w", err)
	}
	return out, nil
}

// AssignedCollision returns the earliest-assigned ticketed entry holding
// the reservation collision key, or nil.
func (s *Store) AssignedCollision(ctx context.Context, key string) (*storage.Entry, error) {
	return s.one(ctx, "collision", sqlCollision, key)
}
