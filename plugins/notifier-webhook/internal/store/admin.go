package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// RecoverStale runs at start: rows left inflight by a process that is gone
// (alive reports false, or the pid is ours, which means a previous process
// with our pid died) go back to pending, due now. Their attempt stays
// counted, so a delivery that crashes the plugin cannot loop forever. It
// returns how many rows it recovered. Rows of live processes are left to
// their owners (and to the lease, should an owner hang).
func (s *Store) RecoverStale(ctx context.Context, alive func(pid int) bool) (int, error) {
	now := ms(s.now())
	total := 0
	err := s.fast(ctx, func(ctx context.Context, tx *sql.Tx) error {
		total = 0
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT coalesce(claimed_pid, 0) FROM deliveries WHERE status = 'inflight'`)
		if err != nil {
			return err
		}
		var pids []int64
		for rows.Next() {
			var pid int64
			if err := rows.Scan(&pid); err != nil {
				rows.Close()
				return err
			}
			pids = append(pids, pid)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, pid := range pids {
			if pid != 0 && pid != s.pid && alive(int(pid)) {
				continue
			}
			res, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'pending', next_attempt_at = ?,
				claim_token = NULL, claimed_pid = NULL, updated_at = ?
				WHERE status = 'inflight' AND coalesce(claimed_pid, 0) = ?`, now, now, pid)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			total += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("recover stale claims: %w", err)
	}
	return total, nil
}

// Projects lists every project that ever enqueued a delivery.
func (s *Store) Projects(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT project_root FROM projects ORDER BY project_root`)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Counts are the number of rows in each state.
type Counts struct {
	Pending, Inflight, Sent, Dead int
}

// Count returns the number of rows per state.
func (s *Store) Count(ctx context.Context) (Counts, error) {
	var c Counts
	rows, err := s.db.QueryContext(ctx, `SELECT status, count(*) FROM deliveries GROUP BY status`)
	if err != nil {
		return c, fmt.Errorf("count: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return c, err
		}
		switch Status(st) {
		case Pending:
			c.Pending = n
		case Inflight:
			c.Inflight = n
		case Sent:
			c.Sent = n
		case Dead:
			c.Dead = n
		}
	}
	return c, rows.Err()
}

// DeadCount is the number of dead letters (an index range count, cheap
// even beside a large backlog).
func (s *Store) DeadCount(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM deliveries WHERE status = 'dead'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count dead letters: %w", err)
	}
	return n, nil
}

// ListDead returns up to limit dead letters, newest first, of project (""
// for every project), and how many there are in all.
func (s *Store) ListDead(ctx context.Context, project string, limit int) ([]*Delivery, int, error) {
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM deliveries WHERE status = 'dead'
		AND (? = '' OR project_root = ?)`, project, project).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list dead letters: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE status = 'dead'
		AND (? = '' OR project_root = ?) ORDER BY updated_at DESC, delivery_id LIMIT ?`, project, project, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list dead letters: %w", err)
	}
	defer rows.Close()
	var out []*Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, d)
	}
	return out, total, rows.Err()
}

// Replay puts dead letters back to pending with a fresh attempt budget,
// due now: the ids given, or with all every dead letter of project (""
// for every project). It returns the ids replayed and the requested ids
// that are not dead letters.
func (s *Store) Replay(ctx context.Context, project string, ids []string, all bool) (replayed, notFound []string, err error) {
	now := ms(s.now())
	err = s.durable(ctx, func(ctx context.Context, tx *sql.Tx) error {
		replayed, notFound = nil, nil
		var rows *sql.Rows
		var err error
		if all {
			rows, err = tx.QueryContext(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?,
				dead_at = NULL, updated_at = ? WHERE status = 'dead' AND (? = '' OR project_root = ?) RETURNING delivery_id`,
				now, now, project, project)
		} else {
			args := []any{now, now, project, project}
			for _, id := range ids {
				args = append(args, id)
			}
			rows, err = tx.QueryContext(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?,
				dead_at = NULL, updated_at = ? WHERE status = 'dead' AND (? = '' OR project_root = ?)
				AND delivery_id IN (`+placeholders(len(ids))+`) RETURNING delivery_id`, args...)
		}
		if err != nil {
			return err
		}
		defer rows.Close()
		got := map[string]bool{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			replayed = append(replayed, id)
			got[id] = true
		}
		for _, id := range ids {
			if !got[id] {
				notFound = append(notFound, id)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, nil, fmt.Errorf("replay dead letters: %w", err)
	}
	return replayed, notFound, nil
}

// PruneSent deletes up to limit sent rows last updated before cutoff.
// Sent rows are kept for a while because they are what makes a re-notified
// event a no-op.
func (s *Store) PruneSent(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	var n int64
	err := s.fast(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM deliveries WHERE rowid IN (SELECT rowid FROM deliveries
			WHERE status = 'sent' AND updated_at < ? LIMIT ?)`, ms(cutoff), limit)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	return int(n), nil
}
