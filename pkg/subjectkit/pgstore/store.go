package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// Options describe how to open a subject namespace.
type Options struct {
	// DB is the namespace's database handle (pgkit sets search_path to its
	// schema). The Store takes ownership: Close closes it, and so does a
	// failed Open.
	DB *pgkit.DB
	// LockTimeout bounds the wait for the namespace lock; default 5 s, as
	// sqlitestore's busy timeout.
	LockTimeout time.Duration
	Hints       model.Hints
	// OnCommit runs after every committed mutation of this Store.
	OnCommit func()
	// Retry is the pause before a lost LISTEN connection is dialled again;
	// default 250 ms, doubling to 5 s while the server stays away.
	Retry time.Duration
}

// Defaults.
const (
	DefaultLockTimeout = 5 * time.Second
	DefaultRetry       = 250 * time.Millisecond
	maxRetry           = 5 * time.Second
)

// lockClass is the first key of the namespace advisory lock ("SUBJ"),
// apart from the queue's and the durable store's; the second is
// hashtext(current_schema()).
const lockClass = 0x5355424A

// Channel is the NOTIFY channel of every subject namespace; the payload
// names the schema, so one database can hold several.
const Channel = "animus_subjects"

// Store is an open subject namespace.
type Store struct {
	db       *pgkit.DB
	hints    model.Hints
	onCommit func()
	retry    time.Duration
	begin    string // the first round trip of every write
	totals   storage.Totals
}

var _ storage.Store = (*Store)(nil)

// Open brings the namespace's schema up to date (one unlocked read when
// current) and returns the Store. It dials; a failure closes o.DB.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.DB == nil {
		return nil, errors.New("pgstore: Options.DB is required")
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.Retry <= 0 {
		o.Retry = DefaultRetry
	}
	s := &Store{db: o.DB, hints: o.Hints, onCommit: o.OnCommit, retry: o.Retry}
	// One simple-protocol message: one round trip. lock_timeout 0 would
	// mean "wait forever": at least 1 ms.
	s.begin = fmt.Sprintf("SET LOCAL lock_timeout = '%dms'; SELECT pg_advisory_xact_lock(%d, hashtext(current_schema()))",
		max(o.LockTimeout.Milliseconds(), 1), lockClass)
	if _, _, err := o.DB.Migrate(ctx, migrations); err != nil {
		o.DB.Close()
		return nil, wrap(ctx, err)
	}
	return s, nil
}

// Close closes the database handle given to Open.
func (s *Store) Close() error {
	s.db.Close()
	return nil
}

// Ping checks that the database answers and holds the schema.
func (s *Store) Ping(ctx context.Context) error {
	var n int
	err := s.db.Tx(ctx, pgkit.ReadOnly, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM meta`).Scan(&n)
	})
	if err == nil && n != 1 {
		err = fmt.Errorf("meta has %d rows", n)
	}
	return wrap(ctx, err)
}

// write runs fn as one transaction under the namespace lock. pgkit may run
// fn again after a failure that committed nothing.
func (s *Store) write(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	err := s.db.Tx(ctx, pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.begin); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
	if err == nil && s.onCommit != nil {
		s.onCommit()
	}
	return wrap(ctx, err)
}

// read runs fn in one REPEATABLE READ READ ONLY snapshot: consistent,
// neither waiting for writers nor blocking them.
func (s *Store) read(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	return wrap(ctx, s.db.Tx(ctx, pgkit.ReadOnly, fn))
}

// Reasons the host reads (after "backend unavailable: ").
const (
	reasonLocked   = "the subject database stayed locked by another process past the lock timeout; retry"
	reasonLost     = "connection lost while committing: the change may have taken effect; retry"
	reasonNoServer = "cannot reach PostgreSQL; retry"
)

// wrap gives PostgreSQL's failures the kit's meaning; errors of the
// callbacks (not found, bad input) and the caller's own cancellation pass
// unchanged. pgx's errors never carry the DSN's password.
func wrap(ctx context.Context, err error) error {
	switch {
	case err == nil, errors.Is(err, storage.ErrNotFound):
		return err
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	case errors.Is(err, pgx.ErrNoRows):
		return storage.ErrNotFound
	case pgkit.IsLockTimeout(err):
		return &storage.UnavailableError{Reason: reasonLocked, Err: err}
	case errors.Is(err, pgkit.ErrCommitUnknown):
		return &storage.UnavailableError{Reason: reasonLost, Err: err}
	case pgkit.IsUnavailable(err):
		return &storage.UnavailableError{Reason: reasonNoServer, Err: err}
	case pgkit.SQLState(err) == "23505": // unique_violation
		return errors.Join(storage.ErrConflict, err)
	}
	return err
}
