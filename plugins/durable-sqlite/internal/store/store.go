package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// The store's own failures. Anything else a method returns is a *BackendError
// (the database could not do its job) or a context error.
var (
	// ErrRunNotFound: no begin_workflow_run for this (run_id, phase_id).
	ErrRunNotFound = errors.New("run not found")
	// ErrStepNotFound: the step id was never issued, or its reservation was
	// abandoned.
	ErrStepNotFound = errors.New("step not found")
	// ErrSuperseded: the reservation expired and another caller has since
	// reserved the same key, so this holder must not commit.
	ErrSuperseded = errors.New("reservation superseded")
)

// NondeterminismError reports an idempotency key already recorded for a
// different step: serving that step's outcome would replay the wrong side
// effect.
type NondeterminismError struct {
	Recorded Identity // the step that owns the key
}

func (e *NondeterminismError) Error() string {
	return fmt.Sprintf("idempotency key is recorded for run %q phase %q step %q",
		e.Recorded.RunID, e.Recorded.PhaseID, e.Recorded.StepName)
}

// BackendError is a database failure. Busy says whether it was lock
// contention that outlasted the busy timeout (worth retrying) rather than
// an I/O or schema problem.
type BackendError struct {
	Op   string
	Busy bool
	Err  error
}

func (e *BackendError) Error() string { return e.Op + ": " + e.Err.Error() }

// Unwrap exposes the SQLite error.
func (e *BackendError) Unwrap() error { return e.Err }

// Identity is what a step is, apart from its key.
type Identity struct {
	RunID, PhaseID, StepName string
}

// Options tune Open.
type Options struct {
	// BusyTimeout is how long a write waits for another process's write
	// transaction (default 10 s).
	BusyTimeout time.Duration
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
}

// Store is one open database file.
type Store struct {
	db  *sqlitex.DB
	now func() time.Time
	// wlock queues this process's writers in Go, so they hand over the
	// SQLite write lock to each other at once instead of polling it through
	// the busy handler; other processes still contend through SQLite.
	wlock chan struct{}
}

// Open opens (creating if needed) the database at path and brings its schema
// up to date. Several processes may open one file at once.
func Open(ctx context.Context, path string, o Options) (*Store, error) {
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
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
	return &Store{db: db, now: o.Now, wlock: make(chan struct{}, 1)}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM meta`).Scan(&n); err != nil {
		return backend("ping", err)
	}
	if n != 1 {
		return &BackendError{Op: "ping", Err: fmt.Errorf("meta has %d rows", n)}
	}
	return nil
}

// write runs fn in one BEGIN IMMEDIATE transaction, after this process's
// earlier writers. Errors from fn that are the store's own pass through;
// database errors become *BackendError.
func (s *Store) write(ctx context.Context, op string, fn func(tx *sql.Tx, now int64) error) error {
	select {
	case s.wlock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.wlock }()
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		// The clock is read under the write lock, so timestamps follow the
		// order in which transactions commit, across processes too.
		return fn(tx, s.now().UnixNano())
	})
	return classify(ctx, op, err)
}

// classify leaves the store's own errors and context errors alone and wraps
// everything else as a backend failure. A statement interrupted because ctx
// ended reports the context's error: the caller gave up, the backend is fine.
func classify(ctx context.Context, op string, err error) error {
	var nd *NondeterminismError
	var be *BackendError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, ErrRunNotFound), errors.Is(err, ErrStepNotFound), errors.Is(err, ErrSuperseded),
		errors.As(err, &nd), errors.As(err, &be):
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return backend(op, err)
}

func backend(op string, err error) error {
	return &BackendError{Op: op, Busy: sqlitex.IsBusy(err), Err: err}
}

// newStepID returns a random, unguessable step id. Step ids are handles a
// caller hands back; they carry no order and no meaning.
func newStepID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "step_" + hex.EncodeToString(b[:])
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

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
