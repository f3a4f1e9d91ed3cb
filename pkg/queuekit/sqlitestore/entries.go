package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

const entryColumns = `entry_id, ordinal, state, subject_key, task_id, workflow_ref, workflow_id,
	enqueued_at, assigned_at, held_at, run_at, run_at_ns, expire_after_secs, expire_at_ns,
	lease_expires_ns, dispatch, assigned_at_ns, qualified_id, subject_generation,
	workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url,
	repo_base_ref, repo_head_ref, repo_collision_key`

// scanEntry reads one entry row through a Row's or Rows' Scan.
func scanEntry(scan func(dest ...any) error) (*storage.Entry, error) {
	var (
		e                                       storage.Entry
		taskID, wfID, assigned, held, runAt, ex sql.NullString
		runAtNS, expireAt, leaseExp             sql.NullInt64
		assignedNS, subjGen, wfGen              sql.NullInt64
		qid, owner, expAt, url, base, head, key sql.NullString
	)
	err := scan(&e.ID, &e.Ordinal, &e.State, &e.SubjectKey, &taskID, &e.WorkflowRef, &wfID,
		&e.EnqueuedAt, &assigned, &held, &runAt, &runAtNS, &ex, &expireAt, &leaseExp, &e.Dispatch,
		&assignedNS, &qid, &subjGen, &wfGen, &owner, &e.LeaseGeneration, &expAt, &url, &base, &head, &key)
	if err != nil {
		return nil, err
	}
	e.AssignedAtNS, e.SubjectGeneration, e.WorkflowGeneration = i64(assignedNS), i64(subjGen), i64(wfGen)
	e.QualifiedID, e.LeaseOwner, e.LeaseExpiresAt = str(qid), str(owner), str(expAt)
	e.RepoURL, e.RepoBaseRef, e.RepoHeadRef, e.RepoCollisionKey = str(url), str(base), str(head), str(key)
	e.TaskID, e.WorkflowID, e.AssignedAt = str(taskID), str(wfID), str(assigned)
	e.HeldAt, e.RunAt, e.ExpireAfterSecs = str(held), str(runAt), str(ex)
	e.RunAtNS, e.ExpireAtNS, e.LeaseExpiresNS = i64(runAtNS), i64(expireAt), i64(leaseExp)
	return &e, nil
}

func str(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return &n.String
}

func i64(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

// Get returns the entry, or nil when there is no live entry with that id.
func (s *Store) Get(ctx context.Context, id string) (*storage.Entry, error) {
	e, err := scanEntry(s.q.QueryRowContext(ctx, sqlGet, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get entry: %w", err)
	}
	return e, nil
}

// CountSubject counts live entries with the subject key.
func (s *Store) CountSubject(ctx context.Context, key string) (int, error) {
	var n int
	err := s.q.QueryRowContext(ctx, sqlCountSubject, key).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count subject: %w", err)
	}
	return n, nil
}

// Counts returns the entries per state (kept by triggers) and counts the
// pending entries whose run_at is strictly after nowNS (a range on
// entries_state_run_at, so it costs what is deferred, not the queue).
func (s *Store) Counts(ctx context.Context, nowNS int64) (storage.Counts, error) {
	var c storage.Counts
	rows, err := s.q.QueryContext(ctx, `SELECT state, n FROM state_counts`)
	if err != nil {
		return c, fmt.Errorf("store: counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var n uint64
		if err := rows.Scan(&state, &n); err != nil {
			return c, fmt.Errorf("store: counts: %w", err)
		}
		switch state {
		case "pending":
			c.Pending = n
		case "assigned":
			c.Assigned = n
		case "held":
			c.Held = n
		}
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("store: counts: %w", err)
	}
	err = s.q.QueryRowContext(ctx, sqlCountDeferred, nowNS).Scan(&c.Deferred)
	if err != nil {
		return c, fmt.Errorf("store: count deferred: %w", err)
	}
	return c, nil
}

// List returns entries in queue order whose state is one of states (all
// when states is empty), skipping offset and returning at most limit (nil =
// no limit), plus how many match before pagination.
func (s *Store) List(ctx context.Context, states []string, limit *uint64, offset uint64) ([]*storage.Entry, uint64, error) {
	where, args := "", []any{}
	if len(states) > 0 {
		where = ` WHERE state IN (?` + strings.Repeat(", ?", len(states)-1) + `)`
		for _, s := range states {
			args = append(args, s)
		}
	}
	var total uint64
	if err := s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM entries`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: list count: %w", err)
	}
	lim := int64(-1) // SQLite: a negative LIMIT means none
	if limit != nil {
		lim = clampU64(*limit)
	}
	rows, err := s.q.QueryContext(ctx, `SELECT `+entryColumns+` FROM entries`+where+
		` ORDER BY ordinal LIMIT ? OFFSET ?`, append(args, lim, clampU64(offset))...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: list: %w", err)
	}
	out, err := collect(rows)
	return out, total, err
}

func clampU64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

func collect(rows *sql.Rows) ([]*storage.Entry, error) {
	defer rows.Close()
	out := []*storage.Entry{}
	for rows.Next() {
		e, err := scanEntry(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("store: scan entry: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: scan entries: %w", err)
	}
	return out, nil
}

// The hot read statements, named so a test can check their query plans:
// every one must stay a range search however deep the queue is.
const (
	// Old-style lease never touches a ticketed entry (§3.10).
	sqlLeasable = `SELECT ` + entryColumns + ` FROM entries
		WHERE state = 'pending' AND (run_at_ns IS NULL OR run_at_ns <= ?) AND subject_generation IS NULL
		ORDER BY ordinal`
	// An old-style lease ages from assigned_at_ns, whoever leased it.
	sqlExpiredLeases = `SELECT ` + entryColumns + ` FROM entries
		WHERE state = 'assigned' AND assigned_at_ns <= ? AND subject_generation IS NULL ORDER BY ordinal`
	// Old-style duplicate warnings count old-style entries only, as in the
	// reference (its ticketed entries carry another subject id).
	sqlCountSubject  = `SELECT COUNT(*) FROM entries WHERE subject_key = ? AND subject_generation IS NULL`
	sqlNextRunAt     = `SELECT run_at FROM entries WHERE state = 'pending' AND run_at_ns > ? ORDER BY run_at_ns LIMIT 1`
	sqlGet           = `SELECT ` + entryColumns + ` FROM entries WHERE entry_id = ?`
	sqlCountDeferred = `SELECT COUNT(*) FROM entries WHERE state = 'pending' AND run_at_ns > ?`
)

// Leasable walks, in queue order, the old-style pending entries that are
// due at nowNS (run_at absent, unparseable or not after now) and, when
// reclaimBefore is set, the old-style assigned entries leased at or before
// it. fn returns
// false to stop the walk. fn must not write: rows are collected first and
// changed after the walk.
//
// The two kinds are read by two range queries merged here by ordinal: one
// OR query would make SQLite collect and sort every pending row.
func (s *Store) Leasable(ctx context.Context, nowNS int64, reclaimBefore *int64, fn func(*storage.Entry) bool) error {
	var expired []*storage.Entry
	if reclaimBefore != nil {
		rows, err := s.q.QueryContext(ctx, sqlExpiredLeases, *reclaimBefore)
		if err != nil {
			return fmt.Errorf("store: expired leases: %w", err)
		}
		if expired, err = collect(rows); err != nil {
			return err
		}
	}
	rows, err := s.q.QueryContext(ctx, sqlLeasable, nowNS)
	if err != nil {
		return fmt.Errorf("store: leasable: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEntry(rows.Scan)
		if err != nil {
			return fmt.Errorf("store: scan entry: %w", err)
		}
		for len(expired) > 0 && expired[0].Ordinal < e.Ordinal {
			if !fn(expired[0]) {
				return nil
			}
			expired = expired[1:]
		}
		if !fn(e) {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: leasable: %w", err)
	}
	for _, e := range expired {
		if !fn(e) {
			return nil
		}
	}
	return nil
}

// Prefix returns, in queue order, every entry whose ordinal is at most
// maxOrdinal.
func (s *Store) Prefix(ctx context.Context, maxOrdinal int64) ([]storage.Position, error) {
	rows, err := s.q.QueryContext(ctx,
		`SELECT entry_id, ordinal FROM entries WHERE ordinal <= ? ORDER BY ordinal`, maxOrdinal)
	if err != nil {
		return nil, fmt.Errorf("store: prefix: %w", err)
	}
	defer rows.Close()
	var out []storage.Position
	for rows.Next() {
		var p storage.Position
		if err := rows.Scan(&p.ID, &p.Ordinal); err != nil {
			return nil, fmt.Errorf("store: prefix: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: prefix: %w", err)
	}
	return out, nil
}

// NextRunAt returns the verbatim run_at of the pending entry with the
// earliest run_at strictly after nowNS, or nil when none is deferred.
func (s *Store) NextRunAt(ctx context.Context, nowNS int64) (*string, error) {
	var runAt string
	err := s.q.QueryRowContext(ctx, sqlNextRunAt, nowNS).Scan(&runAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: next run_at: %w", err)
	}
	return &runAt, nil
}
