package store

import (
	"context"
	"database/sql"
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
var ErrNewerSchema = sqlitex.ErrNewerSchema

// Open opens (creating if needed) the database and brings its schema up to
// date. A current file costs one PRAGMA read (sqlitex.Migrate takes the
// write lock only when there is work, and re-reads the version under it),
// so two processes starting at once migrate exactly once, and a per-call
// process never queues behind a writer just to start.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	db, err := sqlitex.Open(ctx, sqlitex.Options{
		Path:        o.Path,
		BusyTimeout: o.BusyTimeout,
		Synchronous: sqlitex.SyncFull,
		MaxConns:    4,
	})
	if err != nil {
		return nil, err
	}
	if _, _, err := db.Migrate(ctx, migrations); err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db, wlock: make(chan struct{}, 1)}, nil
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

// View runs fn in one read snapshot (sqlitex.View): consistent, and in WAL
// mode it neither waits for writers nor blocks them.
func (s *Store) View(ctx context.Context, fn func(r *Reader) error) error {
	return s.db.View(ctx, func(q sqlitex.Querier) error { return fn(&Reader{q: q}) })
}

// Reader reads inside a transaction.
type Reader struct{ q sqlitex.Querier }

// Tx reads and writes inside a write transaction.
type Tx struct{ Reader }
