package sqlitex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Synchronous is PRAGMA synchronous. FULL makes every commit durable
// across power loss; NORMAL (in WAL mode) only across process crashes.
type Synchronous string

// The two settings the plugins use.
const (
	SyncNormal Synchronous = "NORMAL"
	SyncFull   Synchronous = "FULL"
)

// Options describe how to open a database.
type Options struct {
	Path        string        // file path; parent directories are created (0700)
	BusyTimeout time.Duration // how long a writer waits for another; default 5 s
	Synchronous Synchronous   // default FULL
	// MaxConns bounds the pool (default 4). WAL lets readers run beside
	// the one writer; writers queue on BEGIN IMMEDIATE.
	MaxConns int
	// StmtCache is how many prepared statements each connection keeps for
	// reuse (default 64; negative: none). Preparing is about a fifth of the
	// CPU of a small transaction; database/sql hands every connection the
	// same query strings, so the driver's per-connection LRU (keyed by the
	// SQL text) turns all but the first prepare into a lookup.
	StmtCache int
	// PersistWAL leaves the -wal and -shm files in place when the first
	// pooled connection (the one a short-lived process uses throughout,
	// and so the one that closes the file last) closes. For plugins the
	// daemon runs a process per call: SQLite otherwise deletes both at
	// every exit and the next process creates them again, and ext4's inode
	// allocation for a name just deleted was the largest kernel cost of a
	// cold call. Durability is unchanged: the files hold no committed data
	// once the closing checkpoint has succeeded, and a persistent WAL is
	// truncated then (journal_size_limit bounds it while serving).
	PersistWAL bool
}

// SQLITE_FCNTL_PERSIST_WAL from sqlite3.h, and the journal_size_limit a
// persistent WAL is trimmed to after a checkpoint.
const (
	fcntlPersistWAL = 10
	walSizeLimit    = 4 << 20
)

// DB is an open database.
type DB struct {
	*sql.DB
	Path        string
	busyTimeout time.Duration
}

// Open opens (creating if needed) the database at o.Path with WAL,
// foreign keys, the busy timeout, the chosen synchronous level, and
// BEGIN IMMEDIATE for every transaction, so a read-modify-write never
// upgrades a read lock into a deadlock with another process.
func Open(ctx context.Context, o Options) (*DB, error) {
	if o.Path == "" {
		return nil, errors.New("sqlitex: empty database path")
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	if o.Synchronous == "" {
		o.Synchronous = SyncFull
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 4
	}
	if o.StmtCache == 0 {
		o.StmtCache = 64
	}
	if err := os.MkdirAll(filepath.Dir(o.Path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlitex: create directory for %s: %w", o.Path, err)
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", string(o.Synchronous))
	q.Set("_foreign_keys", "on")
	q.Set("_txlock", "immediate")
	if o.StmtCache > 0 {
		q.Set("_stmt_cache_size", strconv.Itoa(o.StmtCache))
	}
	dsn := "file:" + (&url.URL{Path: o.Path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlitex: open %s: %w", o.Path, err)
	}
	db.SetMaxOpenConns(o.MaxConns)
	db.SetMaxIdleConns(o.MaxConns)
	db.SetConnMaxIdleTime(0)
	d := &DB{DB: db, Path: o.Path, busyTimeout: o.BusyTimeout}
	if err := d.retryBusy(ctx, func() error { return d.firstConn(ctx, o.PersistWAL) }); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitex: open %s: %w", o.Path, err)
	}
	return d, nil
}

// firstConn opens the pool's first connection and pings it; with
// persistWAL it also sets that connection up to keep the WAL files (best
// effort: a failure only costs the re-creation). The connection goes back
// to the pool idle, so it is the one later calls use.
func (db *DB) firstConn(ctx context.Context, persistWAL bool) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.PingContext(ctx); err != nil || !persistWAL {
		return err
	}
	_ = conn.Raw(func(dc any) error {
		if c, ok := dc.(*sqlite3.SQLiteConn); ok {
			return c.SetFileControlInt("main", fcntlPersistWAL, 1)
		}
		return nil
	})
	_, _ = conn.ExecContext(ctx, fmt.Sprintf("PRAGMA journal_size_limit = %d", walSizeLimit))
	return nil
}

// retryBusy runs fn again while it fails with SQLITE_BUSY, with a short,
// growing pause, for up to the busy timeout. Opening needs it: every
// connection runs PRAGMA journal_mode=WAL as it opens, and on a file that
// another process is creating at that moment the switch (or the first
// read while that process recovers the WAL) fails with SQLITE_BUSY at once
// instead of waiting in SQLite's busy handler.
func (db *DB) retryBusy(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(db.busyTimeout)
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

// Tx runs fn in one BEGIN IMMEDIATE transaction and commits it, or rolls
// it back if fn returns an error or panics. Every mutation of a plugin
// goes through here: read, compute and write happen under one write lock.
func (db *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	return run(tx, fn)
}

// run runs fn in the begun tx and commits it, or rolls it back if fn
// returns an error or panics.
func run(tx *sql.Tx, fn func(tx *sql.Tx) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			_ = tx.Rollback()
			panic(v)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// Querier is what a write transaction (*sql.Tx) and a read snapshot's
// pinned connection (*sql.Conn) have in common, so store code can read the
// same way in both.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// View runs fn in one read transaction (BEGIN DEFERRED): a consistent
// snapshot of several statements that, in WAL mode, neither waits for
// writers nor blocks them. The DSN makes every BeginTx IMMEDIATE (a
// writer), so the snapshot is opened by hand on a pinned connection. fn
// must not write.
func (db *DB) View(ctx context.Context, fn func(q Querier) error) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return err
	}
	defer func() {
		if v := recover(); v != nil {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
			panic(v)
		}
		if err != nil {
			// A fresh context: the caller's may be what ended the work.
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	if err = fn(conn); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}

// IsBusy reports whether err is SQLite giving up on a lock after the busy
// timeout (SQLITE_BUSY or SQLITE_LOCKED).
func IsBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// IsConstraint reports whether err is a constraint violation (a duplicate
// key, a failed CHECK or foreign key).
func IsConstraint(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrConstraint
}
