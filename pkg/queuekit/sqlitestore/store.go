package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// Options describe how to open a queue database.
type Options struct {
	Path        string
	BusyTimeout time.Duration
}

// Store is an open queue database, or (inside Update and View) one
// transaction on it. It implements storage.Store.
type Store struct {
	db *sqlitex.DB
	// wlock serialises this process's own writers before they reach
	// SQLite: two goroutines of one process would otherwise meet in
	// SQLite's busy handler, which backs off by sleeping.
	wlock chan struct{}
	// q runs the statements: the database itself outside a transaction,
	// the transaction inside one (inTx).
	q    sqlitex.Querier
	inTx bool
	busy time.Duration // for the -32205 message
}

var _ storage.Store = (*Store)(nil)

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
		// The daemon runs a queue process per call.
		PersistWAL: true,
	})
	if err != nil {
		return nil, busyError(err, o.BusyTimeout)
	}
	if _, _, err := db.Migrate(ctx, migrations); err != nil {
		db.Close()
		return nil, busyError(err, o.BusyTimeout)
	}
	return &Store{db: db, wlock: make(chan struct{}, 1), q: db, busy: o.BusyTimeout}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.q.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// IsBusy reports whether err is SQLite giving up on another process's lock
// after the busy timeout.
func IsBusy(err error) bool { return sqlitex.IsBusy(err) }

// Update runs fn in one BEGIN IMMEDIATE transaction: everything fn reads
// and writes commits together, or nothing does. Inside a transaction it
// runs fn in that transaction. A busy timeout comes back as a
// *storage.UnavailableError.
func (s *Store) Update(ctx context.Context, fn func(tx storage.Store) error) error {
	if s.inTx {
		return fn(s)
	}
	select {
	case s.wlock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.wlock }()
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		return fn(s.within(tx))
	})
	return s.unavailable(err)
}

// View runs fn in one read snapshot (sqlitex.View): consistent, and in WAL
// mode it neither waits for writers nor blocks them.
func (s *Store) View(ctx context.Context, fn func(tx storage.Store) error) error {
	if s.inTx {
		return fn(s)
	}
	return s.unavailable(s.db.View(ctx, func(q sqlitex.Querier) error { return fn(s.within(q)) }))
}

func (s *Store) within(q sqlitex.Querier) *Store {
	return &Store{db: s.db, wlock: s.wlock, q: q, inTx: true, busy: s.busy}
}

func (s *Store) unavailable(err error) error { return busyError(err, s.busy) }

// busyError words a busy timeout for the host (-32205, retriable); other
// errors pass through.
func busyError(err error, timeout time.Duration) error {
	if err == nil || !IsBusy(err) {
		return err
	}
	return &storage.UnavailableError{Err: err, Reason: fmt.Sprintf(
		"queue lock acquisition failed: another process held the queue database for longer than the busy timeout (%v); retry", timeout)}
}
