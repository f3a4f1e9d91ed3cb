package pgkit

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNewerSchema is returned by Migrate for a schema written by a newer
// binary than this one: it must not be touched, only upgraded to.
var ErrNewerSchema = errors.New("pgkit: database schema is newer than this binary")

// Migration is one numbered schema step. Versions start at 1 and increase
// by one. Up's statements run in order inside one transaction, with
// search_path set to the schema, so they name tables unqualified.
type Migration struct {
	Version int
	Name    string
	Up      []string
}

// Migrate brings the schema to the last version in ms and returns the
// version before and after.
//
// A current schema is recognised with one plain read and no lock, so a
// plugin started per call does not queue behind others. Only when behind
// does it take a session advisory lock (pg_advisory_lock, keyed by the
// schema name) on a dedicated connection, read the version again under
// it, and apply each pending migration in its own transaction; so when
// many processes on many hosts start at once, one migrates and the rest
// wait and then find nothing to do. Each applied version is a row of
// <schema>.schema_migrations (version, name, applied_at).
//
// Migrate is bounded by ctx only, not OpTimeout: a migration may
// legitimately take long, and the lock wait lasts as long as another
// process's migration. Give it a deadline.
func (db *DB) Migrate(ctx context.Context, ms []Migration) (from, to int, err error) {
	for i, m := range ms {
		if m.Version != i+1 {
			return 0, 0, fmt.Errorf("pgkit: migration %q has version %d, want %d", m.Name, m.Version, i+1)
		}
	}
	pool, err := db.Pool(ctx)
	if err != nil {
		return 0, 0, err
	}
	if v, err := db.version(ctx, pool); err == nil && v >= len(ms) {
		if v > len(ms) {
			return v, v, db.newerSchema(v, len(ms))
		}
		return v, v, nil
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Release()
	key := lockKey(db.schema)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return 0, 0, fmt.Errorf("pgkit: migrate %s: lock: %w", db.schema, err)
	}
	defer func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), db.connectTO)
		defer cancel()
		if _, err := conn.Exec(uctx, "SELECT pg_advisory_unlock($1)", key); err != nil {
			// The lock is the session's: ending the session releases it,
			// and the pool must not hand out a connection still holding it.
			_ = conn.Conn().Close(uctx)
		}
	}()
	return db.migrateLocked(ctx, conn.Conn(), ms)
}

func (db *DB) migrateLocked(ctx context.Context, conn *pgx.Conn, ms []Migration) (from, to int, err error) {
	s := pgx.Identifier{db.schema}.Sanitize()
	// Under the lock: CREATE … IF NOT EXISTS is not safe against a
	// concurrent creator (it fails with a unique violation instead).
	for _, q := range []string{
		"CREATE SCHEMA IF NOT EXISTS " + s,
		"CREATE TABLE IF NOT EXISTS " + s + `.schema_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return 0, 0, fmt.Errorf("pgkit: migrate %s: %w", db.schema, err)
		}
	}
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+s+".schema_migrations").Scan(&from); err != nil {
		return 0, 0, fmt.Errorf("pgkit: migrate %s: read version: %w", db.schema, err)
	}
	if from > len(ms) {
		return from, from, db.newerSchema(from, len(ms))
	}
	to = from
	for _, m := range ms[from:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			for _, q := range m.Up {
				if _, err := tx.Exec(ctx, q); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, "INSERT INTO "+s+".schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name)
			return err
		})
		if err != nil {
			return from, to, fmt.Errorf("pgkit: migration %d (%s) of %s: %w", m.Version, m.Name, db.schema, err)
		}
		to = m.Version
	}
	return from, to, nil
}

// version reads the schema's version without locks; a missing schema or
// table is an error here, which sends Migrate down the locked path.
func (db *DB) version(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var v int
	err := pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+
		pgx.Identifier{db.schema}.Sanitize()+".schema_migrations").Scan(&v)
	return v, err
}

// Version returns the schema's version: 0 before the first Migrate.
func (db *DB) Version(ctx context.Context) (int, error) {
	pool, err := db.Pool(ctx)
	if err != nil {
		return 0, err
	}
	v, err := db.version(ctx, pool)
	if code := SQLState(err); code == "42P01" || code == "3F000" { // undefined table, schema
		return 0, nil
	}
	return v, err
}

func (db *DB) newerSchema(have, know int) error {
	return fmt.Errorf("%w: schema %s is at version %d, this binary knows %d; upgrade the plugin", ErrNewerSchema, db.schema, have, know)
}

// lockKey derives the advisory lock key from the schema name, so plugins
// with different schemas in one database migrate independently. The
// prefix keeps it apart from keys other code might derive from the name.
func lockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("pgkit.migrate:" + schema))
	return int64(h.Sum64())
}
