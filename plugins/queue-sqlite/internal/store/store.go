package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// Options describe how to open a queue database.
type Options struct {
	Path        string
	BusyTimeout time.Duration
}

// Store is an open queue database.
type Store struct {
	db *sqlitex.DB
	// wlock serialises this process's own writers before they reach
	// SQLite: two goroutines of one process would otherwise meet in
	// SQLite's busy handler, which backs off by sleeping.
	wlock chan struct{}
}

// ErrNewerSchema means the file was written by a newer plugin version.
var ErrNewerSchema = errors.New("the queue database was written by a newer version of this plugin")

// Open opens (creating if needed) the database and brings its schema up to
// date. A current file costs one PRAGMA read; only a new or older file takes
// the write lock to migrate, and sqlitex.Migrate re-reads the version under
// that lock, so two processes starting at once migrate exactly once.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	deadline := time.Now().Add(o.BusyTimeout)
	var db *sqlitex.DB
	err := retryBusy(ctx, deadline, func() error {
		var err error
		db, err = sqlitex.Open(ctx, sqlitex.Options{
			Path:        o.Path,
			BusyTimeout: o.BusyTimeout,
			Synchronous: sqlitex.SyncFull,
			MaxConns:    4,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	var v int
	err = retryBusy(ctx, deadline, func() error {
		var err error
		v, err = db.Version(ctx)
		return err
	})
	if err == nil && v > SchemaVersion() {
		err = fmt.Errorf("%w (schema %d, this binary knows %d)", ErrNewerSchema, v, SchemaVersion())
	}
	if err == nil && v < SchemaVersion() {
		_, _, err = db.Migrate(ctx, migrations)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db, wlock: make(chan struct{}, 1)}, nil
}

// retryBusy runs fn again while it fails with SQLITE_BUSY, with a short,
// growing pause, until deadline. Opening needs it: every connection runs
// PRAGMA journal_mode=WAL as it opens, and on a file another process is
// creating at that moment the switch (or the first read while that process
// recovers the WAL) can fail with SQLITE_BUSY at once instead of waiting in
// the busy handler.
func retryBusy(ctx context.Context, deadline time.Time, fn func() error) error {
	pause := 2 * time.Millisecond
	for {
		err := fn()
		if err == nil || !IsBusy(err) || time.Now().Add(pause).After(deadline) {
			return err
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// IsBusy reports whether err is SQLite giving up on another process's lock
// after the busy timeout.
func IsBusy(err error) bool { return sqlitex.IsBusy(err) }

// Update runs fn in one BEGIN IMMEDIATE transaction: everything fn reads
// and writes commits together, or nothing does.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) error {
	select {
	case s.wlock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.wlock }()
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		return fn(&Tx{Reader{q: tx}})
	})
}

// View runs fn in one deferred (read-only) transaction: a consistent
// snapshot that in WAL mode neither waits for writers nor blocks them.
// sqlitex makes every BeginTx IMMEDIATE, so the snapshot is opened by hand
// on a pinned connection.
func (s *Store) View(ctx context.Context, fn func(r *Reader) error) (err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			// A fresh context: the caller's may be what ended the work.
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	if err = fn(&Reader{q: conn}); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}

// querier is what *sql.Tx and *sql.Conn have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Reader reads inside a transaction.
type Reader struct{ q querier }

// Tx reads and writes inside a write transaction.
type Tx struct{ Reader }
