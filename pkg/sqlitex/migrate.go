package sqlitex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrNewerSchema is returned by Migrate for a database written by a newer
// binary than this one: it must not be touched, only upgraded to.
var ErrNewerSchema = errors.New("sqlitex: database schema is newer than this binary")

// Migration is one numbered schema step. Versions start at 1 and increase
// by one; Up runs inside the migration transaction.
type Migration struct {
	Version int
	Name    string
	Up      func(ctx context.Context, tx *sql.Tx) error
}

// SQL is a Migration body that runs fixed statements.
func SQL(stmts ...string) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}
}

// Migrate brings the database to the last version in ms. A current
// database is recognised with one read and no write lock, so a plugin
// started per call (or beside a busy writer) does not queue behind other
// processes. Otherwise the work runs under BEGIN IMMEDIATE and records
// progress in PRAGMA user_version, which is read again under the lock, so
// when two processes start at once the second waits for the first and
// then finds nothing to do. It returns the version before and after.
func (db *DB) Migrate(ctx context.Context, ms []Migration) (from, to int, err error) {
	for i, m := range ms {
		if m.Version != i+1 {
			return 0, 0, fmt.Errorf("sqlitex: migration %q has version %d, want %d", m.Name, m.Version, i+1)
		}
	}
	if v, err := db.Version(ctx); err == nil && v >= len(ms) {
		if v > len(ms) {
			return v, v, db.newerSchema(v, len(ms))
		}
		return v, v, nil
	}
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&from); err != nil {
			return err
		}
		if from > len(ms) {
			return db.newerSchema(from, len(ms))
		}
		to = from
		for _, m := range ms[from:] {
			if err := m.Up(ctx, tx); err != nil {
				return fmt.Errorf("sqlitex: migration %d (%s): %w", m.Version, m.Name, err)
			}
			to = m.Version
		}
		if to == from {
			return nil
		}
		// PRAGMA takes no bound parameters; the value is an int we own.
		_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", to))
		return err
	})
	return from, to, err
}

func (db *DB) newerSchema(have, know int) error {
	return fmt.Errorf("%w: %s is at version %d, this binary knows %d; upgrade the plugin", ErrNewerSchema, db.Path, have, know)
}

// Version returns PRAGMA user_version, retrying while another process holds
// the file in a state where even a read is refused (see retryBusy).
func (db *DB) Version(ctx context.Context) (int, error) {
	var v int
	err := db.retryBusy(ctx, func() error {
		return db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	})
	return v, err
}
