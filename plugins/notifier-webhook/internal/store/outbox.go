package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// Status is a delivery's state.
type Status string

// The four states.
const (
	Pending  Status = "pending"
	Inflight Status = "inflight"
	Sent     Status = "sent"
	Dead     Status = "dead"
)

// Delivery is one row of the outbox: one event for one (subscription,
// connector).
type Delivery struct {
	DeliveryID     string
	DeliveryKey    string
	ProjectRoot    string
	EventID        string
	EventType      string
	WorkflowID     *string
	TaskID         *string
	ConnectorID    string
	ConnectorType  string
	SubscriptionID string
	// Quiet deliveries report no lifecycle events (they carry lifecycle
	// events themselves; reporting them again would feed a loop).
	Quiet          bool
	Payload        []byte
	Status         Status
	Attempts       int
	NextAttemptAt  time.Time
	LastError      string
	LastStatusCode int
	CreatedAt      time.Time
	UpdatedAt      time.Time
	SentAt         time.Time
	DeadAt         time.Time

	claimToken int64
}

// Options configure Open.
type Options struct {
	Path string
	// Lease is how long a claim is honoured before another process may
	// reclaim the row; it must exceed the longest send (default 2 min).
	Lease time.Duration
	// Now is the clock (tests pass a fake one).
	Now func() time.Time
}

// Store is an open outbox. Every write goes through one connection (see
// sqlitex.Writer), at one of two synchronous levels: FULL for what
// acknowledges something (an enqueue before notify answers, an operator's
// replay), so those survive power loss; NORMAL for the bookkeeping of
// attempts (claims, outcomes, releases). In WAL mode a NORMAL commit
// survives any crash of the process; only a power loss can roll one back,
// and the worst that does is resend a delivery with its same delivery_id,
// which at-least-once delivery allows. The split saves one fsync per
// notify and one per delivery in a flush. (It was two pools once; each
// pool's commits then discarded the other's page cache.) Reads use the
// pool's other connections.
type Store struct {
	db    *sqlitex.DB
	w     *sqlitex.Writer
	pid   int64
	lease time.Duration
	now   func() time.Time
	// listed holds the projects this process's enqueues have committed to
	// the projects table (rows are never deleted), so the next enqueue
	// for one skips that INSERT.
	listed sync.Map
}

// Open opens (creating if needed) and migrates the outbox.
func Open(ctx context.Context, o Options) (*Store, error) {
	db, err := sqlitex.Open(ctx, sqlitex.Options{Path: o.Path, Synchronous: sqlitex.SyncFull, BusyTimeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	if _, _, err := db.Migrate(ctx, migrations); err != nil {
		db.Close()
		return nil, err
	}
	w, err := db.Writer(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &Store{db: db, w: w, pid: int64(os.Getpid()), lease: o.Lease, now: o.Now}
	if s.lease <= 0 {
		s.lease = 2 * time.Minute
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// durable runs fn in a write transaction committed with synchronous=FULL:
// for what acknowledges something. fn's ctx is the caller's without its
// cancellation (see sqlitex.Writer.Tx): its statements run on it.
func (s *Store) durable(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.w.Tx(ctx, sqlitex.SyncFull, fn)
}

// fast runs fn in a write transaction committed with synchronous=NORMAL:
// for the bookkeeping of attempts.
func (s *Store) fast(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.w.Tx(ctx, sqlitex.SyncNormal, fn)
}

// Close closes the database.
func (s *Store) Close() error { return errors.Join(s.w.Close(), s.db.Close()) }

// Path is the database file.
func (s *Store) Path() string { return s.db.Path }

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64)
}

func nullString(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// insertDelivery adds one delivery unless its key is already there.
const insertDelivery = `INSERT INTO deliveries (delivery_id, delivery_key, project_root, event_id,
	event_type, workflow_id, task_id, connector_id, connector_type, subscription_id, quiet, payload, status,
	attempts, next_attempt_at, claim_token, claimed_pid, created_at, updated_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`

// Enqueue inserts ds in one transaction and returns the rows it inserted;
// a row whose delivery_key is already in the outbox (in any state) is
// skipped. Rows for which claim (if non-nil) reports true start claimed by
// this process (inflight, attempts 1) so the caller can send them at once;
// the others are pending and due now.
//
// decided, if non-nil, is called with the rows being inserted once the
// transaction holds the write lock and has inserted them, before its
// commit: what it starts overlaps the commit's fsync. It runs at most
// once; if the commit then fails, Enqueue returns the error and the rows
// do not exist.
func (s *Store) Enqueue(ctx context.Context, ds []Delivery, claim func(*Delivery) bool, decided func([]*Delivery)) ([]*Delivery, error) {
	now := s.now()
	token := rand.Int64()
	var inserted []*Delivery
	err := s.durable(ctx, func(ctx context.Context, tx *sql.Tx) error {
		inserted = inserted[:0]
		projects := map[string]bool{}
		for i := range ds {
			d := ds[i]
			d.Status, d.Attempts, d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = Pending, 0, now, now, now
			var tok, pid any
			if claim != nil && claim(&d) {
				d.Status, d.Attempts, d.claimToken = Inflight, 1, token
				tok, pid = token, s.pid
			}
			res, err := tx.ExecContext(ctx, insertDelivery, d.DeliveryID, d.DeliveryKey, d.ProjectRoot, d.EventID, d.EventType,
				nullString(d.WorkflowID), nullString(d.TaskID), d.ConnectorID, d.ConnectorType, d.SubscriptionID,
				d.Quiet, d.Payload, string(d.Status), d.Attempts, ms(now), tok, pid, ms(now), ms(now))
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				inserted = append(inserted, &d)
				projects[d.ProjectRoot] = true
			}
		}
		for p := range projects {
			if _, ok := s.listed.Load(p); ok {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO projects (project_root, first_seen_at) VALUES (?, ?)
				ON CONFLICT DO NOTHING`, p, ms(now)); err != nil {
				return err
			}
		}
		if decided != nil && len(inserted) > 0 {
			decided(inserted)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	for _, d := range inserted { // committed now
		s.listed.Store(d.ProjectRoot, true)
	}
	return inserted, nil
}

const deliveryColumns = `delivery_id, delivery_key, project_root, event_id, event_type, workflow_id, task_id,
	connector_id, connector_type, subscription_id, quiet, payload, status, attempts, next_attempt_at,
	claim_token, last_error, last_status_code, created_at, updated_at, sent_at, dead_at`

type scanner interface{ Scan(dest ...any) error }

func scanDelivery(sc scanner) (*Delivery, error) {
	var d Delivery
	var wf, task, lastErr sql.NullString
	var status string
	var next, created, updated int64
	var sent, dead, token, code sql.NullInt64
	if err := sc.Scan(&d.DeliveryID, &d.DeliveryKey, &d.ProjectRoot, &d.EventID, &d.EventType, &wf, &task,
		&d.ConnectorID, &d.ConnectorType, &d.SubscriptionID, &d.Quiet, &d.Payload, &status, &d.Attempts, &next,
		&token, &lastErr, &code, &created, &updated, &sent, &dead); err != nil {
		return nil, err
	}
	if wf.Valid {
		d.WorkflowID = &wf.String
	}
	if task.Valid {
		d.TaskID = &task.String
	}
	d.Status, d.LastError, d.LastStatusCode = Status(status), lastErr.String, int(code.Int64)
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = time.UnixMilli(next), time.UnixMilli(created), time.UnixMilli(updated)
	d.SentAt, d.DeadAt, d.claimToken = fromMS(sent), fromMS(dead), token.Int64
	return &d, nil
}

// Claim takes up to limit due rows of project for this process: pending
// rows whose next attempt is due, oldest due first, then rows whose
// claim's lease expired (their owner died or hung). Each claimed row is
// inflight with attempts+1 when Claim returns.
func (s *Store) Claim(ctx context.Context, project string, limit int) ([]*Delivery, error) {
	if limit <= 0 {
		return nil, nil
	}
	now := s.now()
	token := rand.Int64()
	var out []*Delivery
	err := s.fast(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, `UPDATE deliveries
			SET status = 'inflight', attempts = attempts + 1, claim_token = ?, claimed_pid = ?, updated_at = ?
			WHERE delivery_id IN (
				SELECT delivery_id FROM deliveries
				WHERE project_root = ? AND status = 'pending' AND next_attempt_at <= ?
				ORDER BY next_attempt_at LIMIT ?)
			OR delivery_id IN (
				SELECT delivery_id FROM deliveries
				WHERE status = 'inflight' AND updated_at <= ? AND project_root = ? LIMIT ?)
			RETURNING `+deliveryColumns,
			token, s.pid, ms(now), project, ms(now), limit, ms(now.Add(-s.lease)), project, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	// Both halves may contribute; keep the bound the caller asked for by
	// handing the surplus straight back.
	if len(out) > limit {
		if err := s.Release(ctx, out[limit:]); err != nil {
			return nil, err
		}
		out = out[:limit]
	}
	return out, nil
}

// Release hands claimed rows that were never sent back to pending, undoing
// the attempt their claim counted.
func (s *Store) Release(ctx context.Context, ds []*Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	now := ms(s.now())
	err := s.fast(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, d := range ds {
			if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'pending', attempts = max(attempts - 1, 0),
				claim_token = NULL, claimed_pid = NULL, updated_at = ?
				WHERE delivery_id = ? AND status = 'inflight' AND claim_token = ?`, now, d.DeliveryID, d.claimToken); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

// placeholders returns "?, ?, …" for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
