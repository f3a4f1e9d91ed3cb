package pgkit

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Runner runs a store's statements: inside Tx when it has one (under the
// attempt's context TxCtx, which carries OpTimeout), else each statement
// as its own transaction on DB's pool, like SQLite's autocommit. Stores
// keep one per transaction they are bound to.
type Runner struct {
	DB    *DB
	Tx    pgx.Tx
	TxCtx context.Context
}

// ctx is the context a statement runs under: the attempt's inside a
// transaction (it derives from the one Tx was given), unless the caller's
// own has already ended.
func (r Runner) ctx(ctx context.Context) context.Context {
	if r.Tx != nil && ctx.Err() == nil && r.TxCtx != nil {
		return r.TxCtx
	}
	return ctx
}

// Query runs a query.
func (r Runner) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	ctx = r.ctx(ctx)
	if r.Tx != nil {
		return r.Tx.Query(ctx, sql, args...)
	}
	p, err := r.DB.Pool(ctx)
	if err != nil {
		return nil, err
	}
	return p.Query(ctx, sql, args...)
}

// QueryRow runs a query that returns at most one row.
func (r Runner) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	ctx = r.ctx(ctx)
	if r.Tx != nil {
		return r.Tx.QueryRow(ctx, sql, args...)
	}
	p, err := r.DB.Pool(ctx)
	if err != nil {
		return errRow{err}
	}
	return p.QueryRow(ctx, sql, args...)
}

// Exec runs a statement.
func (r Runner) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	ctx = r.ctx(ctx)
	if r.Tx != nil {
		return r.Tx.Exec(ctx, sql, args...)
	}
	p, err := r.DB.Pool(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return p.Exec(ctx, sql, args...)
}

// errRow is a pgx.Row whose Scan reports a failure to get a connection.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
