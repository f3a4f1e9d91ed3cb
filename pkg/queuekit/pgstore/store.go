package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// Options describe how to open a queue namespace.
type Options struct {
	// DB is the namespace's database handle (pgkit sets search_path to
	// its schema). The Store takes ownership: Close closes it, and so
	// does a failed Open.
	DB *pgkit.DB
	// ProjectRoot is recorded in the project_root column of every entry
	// this Store inserts. Informational only.
	ProjectRoot string
	// LockTimeout bounds the wait for the namespace lock (and any row
	// lock) in Update; default 5 s.
	LockTimeout time.Duration
}

// DefaultLockTimeout is LockTimeout when unset.
const DefaultLockTimeout = 5 * time.Second

// lockClass is the first key of the namespace advisory lock ("QUEU"); the
// second is hashtext(current_schema()), so each namespace has its own lock
// and other users of two-int advisory locks keep theirs.
const lockClass = 0x51554555

// Store is an open queue namespace, or (inside Update and View) one
// transaction on it. It implements storage.Store.
type Store struct {
	db          *pgkit.DB
	root        string
	lockTimeout time.Duration
	begin       string // the first statements of every Update

	// Set on a Store bound to a transaction (Update, View).
	tx    pgx.Tx
	txCtx context.Context // the attempt's context: carries pgkit's OpTimeout
	write bool            // Update (FOR UPDATE allowed), not View
}

var _ storage.Store = (*Store)(nil)

// ErrNewerSchema means the namespace was migrated by a newer plugin.
var ErrNewerSchema = pgkit.ErrNewerSchema

// Open brings the namespace's schema up to date (pgkit.Migrate: one
// unlocked read when current) and returns the Store. It dials the
// database; a failure closes o.DB.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.DB == nil {
		return nil, errors.New("pgstore: Options.DB is required")
	}
	s := newStore(o)
	if _, _, err := o.DB.Migrate(ctx, migrations); err != nil {
		o.DB.Close()
		return nil, s.unavailable(err)
	}
	return s, nil
}

func newStore(o Options) *Store {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	s := &Store{db: o.DB, root: o.ProjectRoot, lockTimeout: o.LockTimeout}
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

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if s.tx != nil {
		var one int
		return s.runner().QueryRow(ctx, `SELECT 1`).Scan(&one)
	}
	return s.unavailable(s.db.Ping(ctx))
}

// Update runs fn in one READ COMMITTED transaction that first takes the
// namespace's advisory lock (see the package doc). Inside a transaction
// it runs fn in that transaction. pgkit may run fn again after a failure
// that committed nothing.
func (s *Store) Update(ctx context.Context, fn func(tx storage.Store) error) error {
	if s.tx != nil {
		return fn(s)
	}
	err := s.db.Tx(ctx, pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.begin); err != nil {
			return err
		}
		return fn(s.within(ctx, tx, true))
	})
	return s.unavailable(err)
}

// View runs fn in one REPEATABLE READ READ ONLY snapshot: consistent,
// neither waiting for writers nor blocking them.
func (s *Store) View(ctx context.Context, fn func(tx storage.Store) error) error {
	if s.tx != nil {
		return fn(s)
	}
	err := s.db.Tx(ctx, pgkit.ReadOnly, func(ctx context.Context, tx pgx.Tx) error {
		return fn(s.within(ctx, tx, false))
	})
	return s.unavailable(err)
}

func (s *Store) within(ctx context.Context, tx pgx.Tx, write bool) *Store {
	return &Store{db: s.db, root: s.root, lockTimeout: s.lockTimeout, begin: s.begin, tx: tx, txCtx: ctx, write: write}
}

// unavailable words the failures a retry may cure for the host (-32205):
// the lock timeout and an unreachable database. The queue's own errors
// and everything else pass through unchanged. No Reason carries the DSN.
func (s *Store) unavailable(err error) error {
	if err == nil {
		return nil
	}
	var pe *pluginkit.Error
	var ue *storage.UnavailableError
	if errors.As(err, &pe) || errors.As(err, &ue) {
		return err
	}
	if pgkit.IsLockTimeout(err) {
		return &storage.UnavailableError{Err: err, Reason: fmt.Sprintf(
			"queue lock acquisition failed: another process held the queue for longer than the lock timeout (%v); retry", s.lockTimeout)}
	}
	if errors.Is(err, pgkit.ErrCommitUnknown) {
		return &storage.UnavailableError{Err: err, Reason: "queue database connection lost while committing: the call may have taken effect; retry"}
	}
	if pgkit.IsUnavailable(err) {
		return &storage.UnavailableError{Err: err, Reason: "queue database unavailable: cannot reach PostgreSQL; retry"}
	}
	return err
}

// runner runs the store's statements (pgkit.Runner): in the bound
// transaction, or each on its own through the pool.
func (s *Store) runner() pgkit.Runner { return pgkit.Runner{DB: s.db, Tx: s.tx, TxCtx: s.txCtx} }

// forUpdate is the row-lock clause of the candidate reads in a write
// transaction: rows another transaction holds are skipped, not waited
// for. A View (READ ONLY) cannot lock rows.
func (s *Store) forUpdate() string {
	if s.write {
		return ` FOR UPDATE SKIP LOCKED`
	}
	return ``
}

// limitArg is a LIMIT parameter: a negative limit means none, as in
// SQLite (LIMIT NULL is LIMIT ALL).
func limitArg(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}
