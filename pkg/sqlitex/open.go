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
}

// DB is an open database.
type DB struct {
	*sql.DB
	Path string
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
	if err := os.MkdirAll(filepath.Dir(o.Path), 0o700); err != nil {
		return nil, fmt.Errorf("sqlitex: create directory for %s: %w", o.Path, err)
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", string(o.Synchronous))
	q.Set("_foreign_keys", "on")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: o.Path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlitex: open %s: %w", o.Path, err)
	}
	db.SetMaxOpenConns(o.MaxConns)
	db.SetMaxIdleConns(o.MaxConns)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitex: open %s: %w", o.Path, err)
	}
	return &DB{DB: db, Path: o.Path}, nil
}

// Tx runs fn in one BEGIN IMMEDIATE transaction and commits it, or rolls
// it back if fn returns an error or panics. Every mutation of a plugin
// goes through here: read, compute and write happen under one write lock.
func (db *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
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
