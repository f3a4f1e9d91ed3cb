package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// Options tune Open.
type Options struct {
	// BusyTimeout is how long a write waits for another process's write
	// transaction (default 10 s).
	BusyTimeout time.Duration
}

// Store is one open database file, or (inside Update and View) one
// transaction on it. It implements storage.Store.
type Store struct {
	db *sqlitex.DB
	// w runs this process's write transactions one at a time on one
	// connection: its writers hand over to each other in Go instead of
	// polling SQLite's write lock through the busy handler (other
	// processes still contend through SQLite), and the connection's page
	// cache stays warm from one write to the next.
	w *sqlitex.Writer
	// q runs the statements: the database outside a transaction, the
	// transaction inside one (inTx).
	q    sqlitex.Querier
	inTx bool
}

var _ storage.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path and brings its schema
// up to date. Several processes may open one file at once.
func Open(ctx context.Context, path string, o Options) (*Store, error) {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 10 * time.Second
	}
	db, err := sqlitex.Open(ctx, sqlitex.Options{
		Path:        path,
		BusyTimeout: o.BusyTimeout,
		Synchronous: sqlitex.SyncFull,
	})
	if err != nil {
		return nil, backend("open", err)
	}
	if _, _, err := db.Migrate(ctx, migrations); err != nil {
		db.Close()
		return nil, backend("migrate", err)
	}
	w, err := db.Writer(ctx)
	if err != nil {
		db.Close()
		return nil, backend("open", err)
	}
	return &Store{db: db, w: w, q: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return errors.Join(s.w.Close(), s.db.Close()) }

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	var n int
	if err := s.q.QueryRowContext(ctx, `SELECT count(*) FROM meta`).Scan(&n); err != nil {
		return backend("ping", err)
	}
	if n != 1 {
		return &storage.BackendError{Op: "ping", Err: fmt.Errorf("meta has %d rows", n)}
	}
	return nil
}

// Update runs fn in one BEGIN IMMEDIATE transaction, after this process's
// earlier writers; inside a transaction it runs fn in that one.
func (s *Store) Update(ctx context.Context, fn func(tx storage.Store) error) error {
	if s.inTx {
		return fn(s)
	}
	// Once begun, the transaction runs to its end (see
	// sqlitex.Writer.Tx): it is a few statements of microseconds each
	// (SQLite's busy wait cannot be interrupted anyway), and go-sqlite3
	// runs every exec given a cancellable context on a goroutine of its
	// own so that it can interrupt it: a spawn and two hand-offs per
	// statement, which the CPU profile of a begin+commit pair showed.
	// Cancellation is still honoured up to BEGIN; a caller that gave up
	// meanwhile gets its context error from the step log.
	var fnErr error
	err := s.w.Tx(ctx, sqlitex.SyncFull, func(wctx context.Context, tx *sql.Tx) error {
		fnErr = fn(s.within(uncancelled{q: tx, ctx: wctx}))
		return fnErr
	})
	if err != nil && fnErr == nil && errors.Is(err, ctx.Err()) {
		return err // it gave up waiting for its turn: not a backend failure
	}
	return s.wrap("write", err, fnErr)
}

// View runs fn in one read snapshot: consistent, and in WAL mode it
// neither waits for writers nor blocks them.
func (s *Store) View(ctx context.Context, fn func(tx storage.Store) error) error {
	if s.inTx {
		return fn(s)
	}
	var fnErr error
	err := s.db.View(ctx, func(q sqlitex.Querier) error { fnErr = fn(s.within(q)); return fnErr })
	return s.wrap("read", err, fnErr)
}

func (s *Store) within(q sqlitex.Querier) *Store {
	return &Store{db: s.db, w: s.w, q: q, inTx: true}
}

// uncancelled runs a write transaction's statements on its own
// context, whatever context the method was given (see Update).
type uncancelled struct {
	q   sqlitex.Querier
	ctx context.Context
}

func (u uncancelled) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	return u.q.ExecContext(u.ctx, query, args...)
}

func (u uncancelled) QueryContext(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	return u.q.QueryContext(u.ctx, query, args...)
}

func (u uncancelled) QueryRowContext(_ context.Context, query string, args ...any) *sql.Row {
	return u.q.QueryRowContext(u.ctx, query, args...)
}

// wrap makes a failure of the transaction itself (begin, commit, busy) a
// *storage.BackendError; errors fn returned (a method's BackendError, or
// the log's own) pass through.
func (s *Store) wrap(op string, err, fnErr error) error {
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return backend(op, err)
	}
	return nil
}

func backend(op string, err error) error {
	return &storage.BackendError{Op: op, Busy: sqlitex.IsBusy(err), Err: err}
}

// nullable turns an absent JSON value into SQL NULL.
func nullable(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// bytesOf turns a nullable TEXT column back into JSON bytes (nil = absent).
func bytesOf(s sql.NullString) []byte {
	if !s.Valid {
		return nil
	}
	return []byte(s.String)
}

func nanos(t time.Time) int64     { return t.UnixNano() }
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
