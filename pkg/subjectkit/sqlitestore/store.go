package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// ErrSchemaBehind is returned by Open when the database needs migrations
// and auto-migration is off.
var ErrSchemaBehind = errors.New("database schema is behind this plugin")

// Options configure Open.
type Options struct {
	Path        string
	BusyTimeout time.Duration
	AutoMigrate bool
	Hints       model.Hints
	// OnCommit runs after every committed mutation (the watch hub's nudge).
	OnCommit func()
}

// Store is an open subject database.
type Store struct {
	db       *sqlitex.DB
	hints    model.Hints
	from, to int // schema versions before and after Open
	totals   storage.Totals
	onCommit func()
	// wmu serializes this process's writers, so they queue in Go instead
	// of spinning in SQLite's busy handler against each other; other
	// processes are still kept out by BEGIN IMMEDIATE.
	wmu sync.Mutex
}

// Open opens the database, migrating it when allowed. Two processes
// opening a fresh file at once are safe: migrations run under BEGIN
// IMMEDIATE and the second finds nothing left to do.
func Open(ctx context.Context, o Options) (*Store, error) {
	db, err := sqlitex.Open(ctx, sqlitex.Options{Path: o.Path, BusyTimeout: o.BusyTimeout, Synchronous: sqlitex.SyncNormal, MaxConns: 4})
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, hints: o.Hints, onCommit: o.OnCommit}
	if o.AutoMigrate {
		s.from, s.to, err = s.Migrate(ctx)
	} else {
		err = s.checkVersion(ctx)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Versions are the schema versions before and after Open migrated (equal
// when nothing was pending or auto-migration was off).
func (s *Store) Versions() (from, to int) { return s.from, s.to }

// Migrate applies pending migrations and returns the versions before and
// after. An up-to-date database is recognised without taking the write
// lock (sqlitex.Migrate), so a process starting while another writes does
// not queue behind it.
func (s *Store) Migrate(ctx context.Context) (from, to int, err error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.db.Migrate(ctx, migrations)
}

func (s *Store) checkVersion(ctx context.Context) error {
	v, err := s.db.Version(ctx)
	if err != nil {
		return err
	}
	if v < len(migrations) {
		return fmt.Errorf("%w: it is at version %d, this plugin needs %d; set ANIMUS_SQLITE_AUTO_MIGRATE=true or run `animus-subject-sqlite migrate`",
			ErrSchemaBehind, v, len(migrations))
	}
	if v > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this plugin knows (%d); upgrade the plugin", v, len(migrations))
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Follow returns at once: another process's commit cannot wake this one,
// so watches find it by polling the change log.
func (s *Store) Follow(context.Context, func()) {}

var _ storage.Store = (*Store)(nil)

// write runs fn as one BEGIN IMMEDIATE transaction. A transaction that
// found the database locked past the busy timeout is retried twice more;
// fn must therefore be safe to run again (it recomputes from what it
// reads).
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(time.Duration(attempt*50) * time.Millisecond):
			}
		}
		if err = s.db.Tx(ctx, fn); !sqlitex.IsBusy(err) {
			break
		}
	}
	if err == nil && s.onCommit != nil {
		s.onCommit()
	}
	return wrap(err)
}
