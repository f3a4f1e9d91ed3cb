package sqlitex

import (
	"context"
	"database/sql"
	"fmt"
)

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

// Migrate brings the database to the last version in ms. It runs under
// BEGIN IMMEDIATE and records progress in PRAGMA user_version, so when two
// processes start at once the second waits for the first and then finds
// nothing to do. It returns the version before and after.
func (db *DB) Migrate(ctx context.Context, ms []Migration) (from, to int, err error) {
	for i, m := range ms {
		if m.Version != i+1 {
			return 0, 0, fmt.Errorf("sqlitex: migration %q has version %d, want %d", m.Name, m.Version, i+1)
		}
	}
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&from); err != nil {
			return err
		}
		if from > len(ms) {
			return fmt.Errorf("sqlitex: %s has schema version %d, newer than this binary knows (%d); upgrade the plugin", db.Path, from, len(ms))
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

// Version returns PRAGMA user_version.
func (db *DB) Version(ctx context.Context) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}
