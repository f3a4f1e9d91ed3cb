package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// Storage of the generation-fenced surface (queue 0.4.0): finished
// records, idempotency bindings, subject counters and the lookups the v2
// methods need. The rules live in the queue package.

const (
	finishColumns = `(` + finishedColumns + `)`
	finishSelect  = `entry_id, subject_key, qualified_id, subject_generation, workflow_id,
		workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url,
		repo_base_ref, repo_head_ref`
)

// Finish removes a live entry (completion, drop). A ticketed entry is kept
// in finished_entries with its fence and outcome; an old-style one only
// in the audit trail, as before.
func (s *Store) Finish(ctx context.Context, id, outcome, at, by string) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO finished_entries `+finishColumns+`
		SELECT `+finishSelect+`, ?, ?, ? FROM entries WHERE entry_id = ? AND subject_generation IS NOT NULL`,
		outcome, at, by, id)
	if err != nil {
		return fmt.Errorf("store: finish entry: %w", err)
	}
	return s.Delete(ctx, id)
}

const finishedColumns = `entry_id, subject_key, qualified_id, subject_generation, workflow_id,
	workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url, repo_base_ref,
	repo_head_ref, outcome, finished_at, finished_by`

// scanFinished reads one finished_entries row selected as finishedColumns.
func scanFinished(scan func(dest ...any) error) (*storage.FinishedRow, error) {
	var (
		f                                    storage.FinishedRow
		subjGen, wfGen                       sql.NullInt64
		qid, wf, owner, exp, url, base, head sql.NullString
	)
	if err := scan(&f.ID, &f.SubjectKey, &qid, &subjGen, &wf, &wfGen, &owner, &f.LeaseGeneration,
		&exp, &url, &base, &head, &f.Outcome, &f.FinishedAt, &f.FinishedBy); err != nil {
		return nil, err
	}
	f.QualifiedID, f.SubjectGeneration, f.WorkflowID, f.WorkflowGeneration = str(qid), i64(subjGen), str(wf), i64(wfGen)
	f.LeaseOwner, f.LeaseExpiresAt, f.RepoURL, f.RepoBaseRef, f.RepoHeadRef = str(owner), str(exp), str(url), str(base), str(head)
	return &f, nil
}

// GetFinished returns the finished record of an entry, or nil.
func (s *Store) GetFinished(ctx context.Context, id string) (*storage.Finished, error) {
	f, err := scanFinished(s.q.QueryRowContext(ctx, `SELECT `+finishedColumns+` FROM finished_entries WHERE entry_id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get finished: %w", err)
	}
	return &f.Finished, nil
}

// GetBinding returns the binding of key, or nil.
func (s *Store) GetBinding(ctx context.Context, key string) (*storage.Binding, error) {
	var b storage.Binding
	err := s.q.QueryRowContext(ctx, `SELECT entry_id, request_hash FROM idempotency_bindings WHERE idem_key = ?`, key).
		Scan(&b.EntryID, &b.RequestHash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get binding: %w", err)
	}
	return &b, nil
}

// Bind binds key to an entry forever.
func (s *Store) Bind(ctx context.Context, key, entryID, hash, at string) error {
	_, err := s.q.ExecContext(ctx, `INSERT INTO idempotency_bindings (idem_key, entry_id, request_hash, bound_at)
		VALUES (?, ?, ?, ?)`, key, entryID, hash, at)
	if err != nil {
		return fmt.Errorf("store: bind key: %w", err)
	}
	return nil
}

// NextGeneration allocates the next subject generation of qid: one above
// both the recorded counter and the highest live generation, recorded.
func (s *Store) NextGeneration(ctx context.Context, qid string) (int64, error) {
	var next int64
	err := s.q.QueryRowContext(ctx, `SELECT MAX(
			COALESCE((SELECT last_generation FROM subject_generations WHERE qualified_id = ?1), 0),
			COALESCE((SELECT MAX(subject_generation) FROM entries WHERE qualified_id = ?1), 0)) + 1`, qid).
		Scan(&next)
	if err != nil {
		return 0, fmt.Errorf("store: next generation: %w", err)
	}
	_, err = s.q.ExecContext(ctx, `INSERT INTO subject_generations (qualified_id, last_generation) VALUES (?, ?)
		ON CONFLICT (qualified_id) DO UPDATE SET last_generation = excluded.last_generation`, qid, next)
	if err != nil {
		return 0, fmt.Errorf("store: record generation: %w", err)
	}
	return next, nil
}

// SetIdentity gives an old-style entry its canonical id and generation.
func (s *Store) SetIdentity(ctx context.Context, id, qid string, generation int64) error {
	_, err := s.q.ExecContext(ctx, `UPDATE entries SET qualified_id = ?, subject_generation = ? WHERE entry_id = ?`,
		qid, generation, id)
	if err != nil {
		return fmt.Errorf("store: set identity: %w", err)
	}
	return nil
}

// The v2 lookups, named so plan_test.go can hold them to their indexes.
const (
	sqlLiveTicketed = `SELECT ` + entryColumns + ` FROM entries
		WHERE qualified_id = ? AND subject_generation IS NOT NULL ORDER BY subject_generation DESC LIMIT 1`
	sqlOldStyleOf = `SELECT ` + entryColumns + ` FROM entries
		WHERE (qualified_id = ? OR qualified_id IS NULL) AND state IN ('pending', 'held')
		AND subject_generation IS NULL ORDER BY ordinal`
	sqlV2Candidates = `SELECT ` + entryColumns + ` FROM entries
		WHERE state = 'pending' AND (run_at_ns IS NULL OR run_at_ns <= ?) ORDER BY ordinal LIMIT ?`
	sqlCollision = `SELECT ` + entryColumns + ` FROM entries
		WHERE repo_collision_key = ? AND state = 'assigned' AND subject_generation IS NOT NULL
		ORDER BY assigned_at_ns LIMIT 1`
)

func (s *Store) one(ctx context.Context, what, q string, args ...any) (*storage.Entry, error) {
	e, err := scanEntry(s.q.QueryRowContext(ctx, q, args...).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return e, nil
}

// LiveTicketed returns the live ticketed entry of qid with the highest
// generation, or nil.
func (s *Store) LiveTicketed(ctx context.Context, qid string) (*storage.Entry, error) {
	return s.one(ctx, "live ticketed", sqlLiveTicketed, qid)
}

// OldStyleOf returns, in queue order, the pending and held old-style
// entries that may be of qid: those stored with it and those written by
// 0.3.2 without a canonical id (the caller decides from the dispatch).
func (s *Store) OldStyleOf(ctx context.Context, qid string) ([]*storage.Entry, error) {
	rows, err := s.q.QueryContext(ctx, sqlOldStyleOf, qid)
	if err != nil {
		return nil, fmt.Errorf("store: old-style of subject: %w", err)
	}
	return collect(rows)
}

// V2Candidates returns up to limit due pending entries in queue order,
// ticketed or not.
func (s *Store) V2Candidates(ctx context.Context, nowNS int64, limit int) ([]*storage.Entry, error) {
	rows, err := s.q.QueryContext(ctx, sqlV2Candidates, nowNS, limit)
	if err != nil {
		return nil, fmt.Errorf("store: v2 candidates: %w", err)
	}
	return collect(rows)
}

// AssignedCollision returns the earliest-assigned ticketed entry holding
// the reservation collision key, or nil.
func (s *Store) AssignedCollision(ctx context.Context, key string) (*storage.Entry, error) {
	return s.one(ctx, "collision", sqlCollision, key)
}
