package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
)

// Options describe how to open a durable namespace.
type Options struct {
	// DB is the namespace's database handle (pgkit sets search_path to
	// its schema). The Store takes ownership: Close closes it, and so
	// does a failed Open.
	DB *pgkit.DB
	// LockTimeout bounds the wait for the namespace lock (and any row
	// lock) in Update; default 10 s, as sqlitestore's BusyTimeout.
	LockTimeout time.Duration
}

// DefaultLockTimeout is LockTimeout when unset.
const DefaultLockTimeout = 10 * time.Second

// lockClass is the first key of the namespace advisory lock ("DURA"),
// apart from the queue's ("QUEU", 0x51554555); the second is
// hashtext(current_schema()), so each namespace has its own lock and other
// users of two-int advisory locks keep theirs.
const lockClass = 0x44555241

// Store is an open durable namespace, or (inside Update and View) one
// transaction on it. It implements storage.Store.
type Store struct {
	db          *pgkit.DB
	lockTimeout time.Duration
	begin       string // the first statements of every Update

	// Set on a Store bound to a transaction (Update, View).
	tx    pgx.Tx
	txCtx context.Context // the attempt's context: carries pgkit's OpTimeout
}

var _ storage.Store = (*Store)(nil)

// ErrNewerSchema means the namespace was migrated by a newer plugin.
var ErrNewerSchema = pgkit.ErrNewerSchema

// Open brings the namespace's schema up to date (pgkit.Migrate: one
// unlocked read when current) and returns the Store. It dials the
// database; a failure closes o.DB. Its errors are *storage.BackendError
// (Busy when the database cannot be reached) wrapping pgkit's, so
// errors.Is(err, ErrNewerSchema) holds for a newer schema.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.DB == nil {
		return nil, errors.New("pgstore: Options.DB is required")
	}
	s := newStore(o)
	if _, _, err := o.DB.Migrate(ctx, migrations); err != nil {
		o.DB.Close()
		return nil, backend("migrate", err)
	}
	return s, nil
}

func newStore(o Options) *Store {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	s := &Store{db: o.DB, lockTimeout: o.LockTimeout}
	// Sent as one simple-protocol message (no parameters): one round trip.
	// lock_timeout 0 would mean "wait forever": at least 1 ms.
	s.begin = fmt.Sprintf("SET LOCAL lock_timeout = '%dms'; SELECT pg_advisory_xact_lock(%d, hashtext(current_schema()))",
		max(o.LockTimeout.Milliseconds(), 1), lockClass)
	return s
}

// Close closes the database handle given to Open.
func (s *Store) Close() error {
	s.db.Close()
	return nil
}

// Ping checks that the database answers and holds the schema.
func (s *Store) Ping(ctx context.Context) error {
	var n int
	if err := s.runner().QueryRow(ctx, `SELECT count(*) FROM meta`).Scan(&n); err != nil {
		return backend("ping", err)
	}
	if n != 1 {
		return &storage.BackendError{Op: "ping", Err: fmt.Errorf("meta has %d rows", n)}
	}
	return nil
}

// Update runs fn in one READ COMMITTED transaction that first takes the
// namespace's advisory lock (see the package doc). Inside a transaction
// it runs fn in that transaction. pgkit may run fn again after a failure
// that committed nothing.
func (s *Store) Update(ctx context.Context, fn func(tx storage.Store) error) error {
	if s.tx != nil {
		return fn(s)
	}
	var fnErr error
	err := s.db.Tx(ctx, pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		fnErr = nil // this attempt's
		if _, err := tx.Exec(ctx, s.begin); err != nil {
			return err
		}
		fnErr = fn(s.within(ctx, tx))
		return fnErr
	})
	return wrap("write", err, fnErr)
}

// View runs fn in one REPEATABLE READ READ ONLY snapshot: consistent,
// neither waiting for writers nor blocking them.
func (s *Store) View(ctx context.Context, fn func(tx storage.Store) error) error {
	if s.tx != nil {
		return fn(s)
	}
	var fnErr error
	err := s.db.Tx(ctx, pgkit.ReadOnly, func(ctx context.Context, tx pgx.Tx) error {
		fnErr = fn(s.within(ctx, tx))
		return fnErr
	})
	return wrap("read", err, fnErr)
}

func (s *Store) within(ctx context.Context, tx pgx.Tx) *Store {
	return &Store{db: s.db, lockTimeout: s.lockTimeout, begin: s.begin, tx: tx, txCtx: ctx}
}

// wrap makes a failure of the transaction itself (connect, the namespace
// lock, commit, a timeout) a *storage.BackendError; an error fn returned
// (a method's BackendError, or the log's own) passes through unchanged.
// pgkit returns fn's error as is unless the attempt ran out of time, which
// it wraps: that is the transaction's failure, reported as such.
func wrap(op string, err, fnErr error) error {
	switch {
	case err == nil:
		return nil
	case fnErr != nil && err == fnErr:
		return fnErr
	}
	return backend(op, err)
}

// backend wraps a database failure. Busy (retrying may succeed) for a lock
// wait past LockTimeout and for an unreachable database, including a
// COMMIT whose answer was lost (pgkit.ErrCommitUnknown). pgkit's and pgx's
// errors never carry the DSN's password.
func backend(op string, err error) error {
	var be *storage.BackendError
	if errors.As(err, &be) && err == error(be) {
		return err
	}
	e := &storage.BackendError{Op: op, Err: err, Busy: true}
	switch {
	case pgkit.IsLockTimeout(err):
		e.Reason = "durable store database is busy (another process held the namespace lock past the lock timeout); retry"
	case errors.Is(err, pgkit.ErrCommitUnknown):
		e.Reason = "durable store database connection lost while committing: the call may have taken effect; retry"
	case pgkit.IsUnavailable(err):
		e.Reason = "durable store database unavailable: cannot reach PostgreSQL; retry"
	default:
		e.Busy = false
	}
	return e
}

// runner runs the store's statements (pgkit.Runner): in the bound
// transaction, or each on its own through the pool.
func (s *Store) runner() pgkit.Runner { return pgkit.Runner{DB: s.db, Tx: s.tx, TxCtx: s.txCtx} }

// nullable turns an absent JSON value into SQL NULL.
func nullable(b []byte) *string {
	if len(b) == 0 {
		return nil
	}
	v := string(b)
	return &v
}

// bytesOf turns a nullable text column back into JSON bytes (nil = absent).
func bytesOf(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nanos(t time.Time) int64     { return t.UnixNano() }
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
