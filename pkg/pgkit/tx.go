package pgkit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TxMode chooses isolation and access mode.
type TxMode int

const (
	// ReadWrite is READ COMMITTED READ WRITE: PostgreSQL's default, where
	// row locks (SELECT … FOR UPDATE, UPDATE … WHERE) serialize writers.
	ReadWrite TxMode = iota
	// ReadOnly is REPEATABLE READ READ ONLY: one snapshot for every
	// statement, never blocking writers nor blocked by them.
	ReadOnly
	// Serializable is SERIALIZABLE READ WRITE, for read-compute-write
	// logic that cannot name its rows up front; conflicts surface as
	// 40001, which Tx retries.
	Serializable
)

func (m TxMode) options() (pgx.TxOptions, error) {
	switch m {
	case ReadWrite:
		return pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite}, nil
	case ReadOnly:
		return pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, nil
	case Serializable:
		return pgx.TxOptions{IsoLevel: pgx.Serializable, AccessMode: pgx.ReadWrite}, nil
	}
	return pgx.TxOptions{}, fmt.Errorf("pgkit: unknown TxMode %d", m)
}

// Retry policy of Tx: a few attempts with jittered exponential backoff,
// enough to ride out a conflict or a fast server restart, never more than
// about OpTimeout in total.
const (
	maxAttempts  = 6
	firstBackoff = 10 * time.Millisecond
	maxBackoff   = 500 * time.Millisecond
)

// Tx runs fn in one transaction and commits it. fn's ctx carries the
// attempt's OpTimeout deadline; fn must use it and must not keep tx.
//
// When an attempt fails with a retryable error (IsRetryable) the WHOLE fn
// runs again in a new transaction, after a short jittered pause, for up
// to maxAttempts attempts while the elapsed time stays under OpTimeout;
// so fn must not have effects outside the transaction that cannot be
// repeated. Timeouts are not retried. Any other error, including fn's
// own, is returned unchanged, so errors.Is and errors.As find it. If the
// connection is lost while COMMIT is in flight, the error wraps
// ErrCommitUnknown and fn is not run again.
func (db *DB) Tx(ctx context.Context, mode TxMode, fn func(ctx context.Context, tx pgx.Tx) error) error {
	opts, err := mode.options()
	if err != nil {
		return err
	}
	start := time.Now()
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		err := db.attempt(ctx, opts, fn)
		if err == nil || !IsRetryable(err) || isTimeout(err) || attempt >= maxAttempts || ctx.Err() != nil {
			return err
		}
		// Full jitter in [backoff/2, backoff): two conflicting callers
		// should not collide again in lockstep.
		pause := backoff/2 + rand.N(backoff/2)
		if time.Since(start)+pause >= db.opTO {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// attempt is one transaction: acquire, begin, fn, commit, under its own
// OpTimeout.
func (db *DB) attempt(parent context.Context, opts pgx.TxOptions, fn func(context.Context, pgx.Tx) error) (err error) {
	ctx, cancel := context.WithTimeout(parent, db.opTO)
	defer cancel()
	// timedOut turns the attempt's own deadline (not the caller's) into
	// ErrTimeout, which IsUnavailable recognises.
	timedOut := func(err error) error {
		if err != nil && ctx.Err() != nil && parent.Err() == nil && !errors.Is(err, ErrTimeout) {
			return fmt.Errorf("%w after %s: %w", ErrTimeout, db.opTO, err)
		}
		return err
	}
	pool, err := db.Pool(ctx)
	if err != nil {
		return timedOut(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return timedOut(err)
	}
	defer conn.Release()
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		return timedOut(err)
	}
	committing := false
	defer func() {
		if committing {
			return
		}
		// A fresh context: ctx may be what ended the work. A rollback that
		// fails leaves the connection closed, which the pool discards.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(parent), db.connectTO)
		defer rcancel()
		_ = tx.Rollback(rctx)
		if v := recover(); v != nil {
			panic(v)
		}
	}()
	if err := fn(ctx, tx); err != nil {
		if IsRetryable(err) || (ctx.Err() != nil && parent.Err() == nil) {
			return timedOut(err)
		}
		return err // fn's own error, unchanged
	}
	committing = true
	if err := tx.Commit(ctx); err != nil {
		return commitError(timedOut(err))
	}
	return nil
}

// commitError classifies a failed COMMIT. An ERROR from the server (a
// serialization failure detected at commit, a deferred constraint) or
// pgx's "COMMIT answered ROLLBACK" is a definite outcome: nothing was
// committed. So is a failure before any byte was sent. Anything else (the
// connection dropped, a FATAL such as 57P01, the attempt timed out) may
// have happened after the commit record was written.
func commitError(err error) error {
	if errors.Is(err, pgx.ErrTxCommitRollback) || pgconn.SafeToRetry(err) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && severity(pe) == "ERROR" && !IsUnavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
}

// severity prefers the untranslated severity (PostgreSQL 9.6+), as
// lc_messages may localize Severity.
func severity(pe *pgconn.PgError) string {
	if pe.SeverityUnlocalized != "" {
		return pe.SeverityUnlocalized
	}
	return pe.Severity
}
