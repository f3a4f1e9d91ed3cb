package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrLostClaim reports a result write for a row this process no longer
// owns (its lease expired and another process reclaimed it).
var ErrLostClaim = errors.New("the delivery is no longer claimed by this process")

// Outcome is the result of one attempt at a row this process claimed, as
// Record writes it: Status Sent, Pending (a retry due at Next) or Dead.
type Outcome struct {
	Delivery *Delivery
	Status   Status
	Next     time.Time // Pending only
	LastErr  string    // Pending and Dead
	Code     int       // the HTTP status, 0 when there was no response
}

// outcomeSQL is the UPDATE of one outcome and its arguments, the row's
// key and claim last.
func outcomeSQL(o Outcome, now int64) (string, []any, error) {
	var set string
	var args []any
	switch o.Status {
	case Sent:
		set, args = `status = 'sent', sent_at = ?, last_error = NULL, last_status_code = ?`, []any{now, o.Code}
	case Pending:
		set, args = `status = 'pending', next_attempt_at = ?, last_error = ?, last_status_code = ?`,
			[]any{ms(o.Next), o.LastErr, nullCode(o.Code)}
	case Dead:
		set, args = `status = 'dead', dead_at = ?, last_error = ?, last_status_code = ?`, []any{now, o.LastErr, nullCode(o.Code)}
	default:
		return "", nil, fmt.Errorf("no outcome %q", o.Status)
	}
	return `UPDATE deliveries SET ` + set + `, claim_token = NULL, claimed_pid = NULL, updated_at = ?
		WHERE delivery_id = ? AND status = 'inflight' AND claim_token = ?`,
		append(args, now, o.Delivery.DeliveryID, o.Delivery.claimToken), nil
}

// MarkSent records a successful delivery.
func (s *Store) MarkSent(ctx context.Context, d *Delivery, code int) error {
	return s.Record(ctx, []Outcome{{Delivery: d, Status: Sent, Code: code}})[0]
}

// MarkRetry puts the delivery back to pending, due at next.
func (s *Store) MarkRetry(ctx context.Context, d *Delivery, next time.Time, lastErr string, code int) error {
	return s.Record(ctx, []Outcome{{Delivery: d, Status: Pending, Next: next, LastErr: lastErr, Code: code}})[0]
}

// MarkDead dead-letters the delivery.
func (s *Store) MarkDead(ctx context.Context, d *Delivery, lastErr string, code int) error {
	return s.Record(ctx, []Outcome{{Delivery: d, Status: Dead, LastErr: lastErr, Code: code}})[0]
}

func nullCode(code int) any {
	if code == 0 {
		return nil
	}
	return code
}

// Record applies outcomes to rows this process claimed, all in one
// transaction, and returns one error per outcome: nil, ErrLostClaim for a
// row another process reclaimed, or the transaction's error for every row
// when it failed. One transaction for many outcomes is what keeps a flush
// from queueing one write lock (and its WAL frames) per delivery behind
// the others: a flush records its sends in a few commits, not 128.
func (s *Store) Record(ctx context.Context, outs []Outcome) []error {
	errs := make([]error, len(outs))
	now := ms(s.now())
	for _, o := range outs {
		if o.Status == Pending {
			o.Delivery.NextAttemptAt = o.Next
		}
	}
	err := s.fast(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for i, o := range outs {
			query, args, err := outcomeSQL(o, now)
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, query, args...)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if n == 0 {
				errs[i] = ErrLostClaim
			}
		}
		return nil
	})
	if err != nil {
		err = fmt.Errorf("record outcome: %w", err)
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	return errs
}
