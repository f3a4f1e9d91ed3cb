package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

const entryColumns = `entry_id, ordinal, state, subject_key, task_id, workflow_ref, workflow_id,
	enqueued_at, assigned_at, held_at, run_at, run_at_ns, expire_after_secs, expire_at_ns,
	lease_expires_ns, dispatch, assigned_at_ns, qualified_id, subject_generation,
	workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url,
	repo_base_ref, repo_head_ref, repo_collision_key`

// scanEntry reads one entry row; a NULL leaves its pointer field nil.
func scanEntry(scan func(dest ...any) error) (*storage.Entry, error) {
	var e storage.Entry
	var dispatch string
	err := scan(&e.ID, &e.Ordinal, &e.State, &e.SubjectKey, &e.TaskID, &e.WorkflowRef, &e.WorkflowID,
		&e.EnqueuedAt, &e.AssignedAt, &e.HeldAt, &e.RunAt, &e.RunAtNS, &e.ExpireAfterSecs, &e.ExpireAtNS,
		&e.LeaseExpiresNS, &dispatch, &e.AssignedAtNS, &e.QualifiedID, &e.SubjectGeneration,
		&e.WorkflowGeneration, &e.LeaseOwner, &e.LeaseGeneration, &e.LeaseExpiresAt, &e.RepoURL,
		&e.RepoBaseRef, &e.RepoHeadRef, &e.RepoCollisionKey)
	if err != nil {
		return nil, err
	}
	e.Dispatch = []byte(dispatch)
	return &e, nil
}

func collect(rows pgx.Rows, err error) ([]*storage.Entry, error) {
	if err != nil {
		return nil, err
	}
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

// Get returns the entry, or nil when there is no live entry with that id.
func (s *Store) Get(ctx context.Context, id string) (*storage.Entry, error) {
	return s.one(ctx, "get entry", sqlGet, id)
}

func (s *Store) one(ctx context.Context, what, q string, args ...any) (*storage.Entry, error) {
	e, err := scanEntry(s.runner().QueryRow(ctx, q, args...).Scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return e, nil
}

// CountSubject counts live old-style entries with the subject key.
func (s *Store) CountSubject(ctx context.Context, key string) (int, error) {
	var n int
	if err := s.runner().QueryRow(ctx, sqlCountSubject, key).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count subject: %w", err)
	}
	return n, nil
}

// Counts returns the entries per state (kept by the trigger) and counts
// the pending entries whose run_at is strictly after nowNS (a range on
// entries_state_run_at).
func (s *Store) Counts(ctx context.Context, nowNS int64) (storage.Counts, error) {
	var c storage.Counts
	rows, err := s.runner().Query(ctx, `SELECT state, n FROM state_counts`)
	if err != nil {
		return c, fmt.Errorf("store: counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var n int64
		if err := rows.Scan(&state, &n); err != nil {
			return c, fmt.Errorf("store: counts: %w", err)
		}
		switch state {
		case "pending":
			c.Pending = uint64(n)
		case "assigned":
			c.Assigned = uint64(n)
		case "held":
			c.Held = uint64(n)
		}
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("store: counts: %w", err)
	}
	var deferred int64
	if err := s.runner().QueryRow(ctx, sqlCountDeferred, nowNS).Scan(&deferred); err != nil {
		return c, fmt.Errorf("store: count deferred: %w", err)
	}
	c.Deferred = uint64(deferred)
	return c, nil
}

// List returns entries in queue order whose state is one of states (all
// when states is empty), skipping offset and returning at most limit (nil
// = no limit), plus how many match before pagination.
func (s *Store) List(ctx context.Context, states []string, limit *uint64, offset uint64) ([]*storage.Entry, uint64, error) {
	where, args := "", []any{}
	if len(states) > 0 {
		where, args = ` WHERE state = ANY($1)`, []any{states}
	}
	var total int64
	if err := s.runner().QueryRow(ctx, `SELECT COUNT(*) FROM entries`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: list count: %w", err)
	}
	var lim *int64 // NULL: LIMIT ALL
	if limit != nil {
		l := clampU64(*limit)
		lim = &l
	}
	n := len(args)
	out, err := collect(s.runner().Query(ctx, fmt.Sprintf(`SELECT `+entryColumns+` FROM entries`+where+
		` ORDER BY ordinal LIMIT $%d OFFSET $%d`, n+1, n+2), append(args, lim, clampU64(offset))...))
	if err != nil {
		return nil, 0, fmt.Errorf("store: list: %w", err)
	}
	return out, uint64(total), nil
}

func clampU64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

// The hot read statements, named so plan_test.go can check their plans:
// every one must stay an index range scan however deep the queue is.
const (
	// Old-style lease never touches a ticketed entry. Both walks read in
	// batches after an ordinal (see Leasable); the row-lock clause is
	// appended in a write transaction.
	sqlLeasable = `SELECT ` + entryColumns + ` FROM entries
		WHERE state = 'pending' AND (run_at_ns IS NULL OR run_at_ns <= $1) AND subject_generation IS NULL
		AND ordinal > $2 ORDER BY ordinal LIMIT $3`
	// An old-style lease ages from assigned_at_ns, whoever leased it.
	sqlExpiredLeases = `SELECT ` + entryColumns + ` FROM entries
		WHERE state = 'assigned' AND assigned_at_ns <= $1 AND subject_generation IS NULL
		AND ordinal > $2 ORDER BY ordinal LIMIT $3`
	sqlCountSubject  = `SELECT COUNT(*) FROM entries WHERE subject_key = $1 AND subject_generation IS NULL`
	sqlNextRunAt     = `SELECT run_at FROM entries WHERE state = 'pending' AND run_at_ns > $1 ORDER BY run_at_ns LIMIT 1`
	sqlGet           = `SELECT ` + entryColumns + ` FROM entries WHERE entry_id = $1`
	sqlCountDeferred = `SELECT COUNT(*) FROM entries WHERE state = 'pending' AND run_at_ns > $1`
)

// leasableBatch is how many rows a Leasable walk reads per statement: the
// walk usually stops after a few, and no statement is open while fn runs.
const leasableBatch = 128

// walk reads one of Leasable's two streams in ordinal order, a batch at a
// time.
type walk struct {
	s     *Store
	sql   string
	bound int64
	after int64
	buf   []*storage.Entry
	done  bool
}

// peek returns the next entry of the stream, or nil at its end.
func (w *walk) peek(ctx context.Context) (*storage.Entry, error) {
	if len(w.buf) == 0 && !w.done {
		batch, err := collect(w.s.runner().Query(ctx, w.sql+w.s.forUpdate(), w.bound, w.after, leasableBatch))
		if err != nil {
			return nil, err
		}
		w.buf, w.done = batch, len(batch) < leasableBatch
		if len(batch) > 0 {
			w.after = batch[len(batch)-1].Ordinal
		}
	}
	if len(w.buf) == 0 {
		return nil, nil
	}
	return w.buf[0], nil
}

// Leasable walks, in queue order, the old-style pending entries that are
// due at nowNS (run_at absent, unparseable or not after now) and, when
// reclaimBefore is set, the old-style assigned entries leased at or before
// it, until fn returns false. fn must not write.
//
// The two kinds are read by two range queries merged here by ordinal, as
// in SQLite. Each is read in batches (ordinal > the last seen, LIMIT), so
// a walk that stops early reads little however deep the queue is, the
// planner keeps to the ordered index (no sort), and fn never runs while a
// statement is open on the connection. In a write transaction the rows
// read are locked (FOR UPDATE SKIP LOCKED).
func (s *Store) Leasable(ctx context.Context, nowNS int64, reclaimBefore *int64, fn func(*storage.Entry) bool) error {
	pending := &walk{s: s, sql: sqlLeasable, bound: nowNS, after: math.MinInt64}
	expired := &walk{s: s, sql: sqlExpiredLeases, after: math.MinInt64, done: reclaimBefore == nil}
	if reclaimBefore != nil {
		expired.bound = *reclaimBefore
	}
	for {
		p, err := pending.peek(ctx)
		if err != nil {
			return fmt.Errorf("store: leasable: %w", err)
		}
		x, err := expired.peek(ctx)
		if err != nil {
			return fmt.Errorf("store: expired leases: %w", err)
		}
		var next *storage.Entry
		switch {
		case p == nil && x == nil:
			return nil
		case x != nil && (p == nil || x.Ordinal < p.Ordinal):
			next, expired.buf = x, expired.buf[1:]
		default:
			next, pending.buf = p, pending.buf[1:]
		}
		if !fn(next) {
			return nil
		}
	}
}

// Prefix returns, in queue order, every entry whose ordinal is at most
// maxOrdinal.
func (s *Store) Prefix(ctx context.Context, maxOrdinal int64) ([]storage.Position, error) {
	rows, err := s.runner().Query(ctx, `SELECT entry_id, ordinal FROM entries WHERE ordinal <= $1 ORDER BY ordinal`, maxOrdinal)
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
	err := s.runner().QueryRow(ctx, sqlNextRunAt, nowNS).Scan(&runAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: next run_at: %w", err)
	}
	return &runAt, nil
}
