// Package scratch makes and drops throwaway namespaces in a PostgreSQL
// database, for the tests, the compatibility matrix and the demo, which
// each give a plugin an empty queue of its own. It does not import
// testing, so commands may use it; pgtest wraps it for tests.
package scratch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Exec runs one statement on a fresh connection to dsn, bounded by ctx
// and 30 s. A fresh connection, because the caller may have restarted
// the server since its last one.
func Exec(ctx context.Context, dsn, sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql, args...)
	return err
}

// NewSchema creates an empty schema <prefix>_<16 hex digits> and returns
// its name and the function that drops it (CASCADE).
func NewSchema(ctx context.Context, dsn, prefix string) (name string, drop func() error, err error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	name = prefix + "_" + hex.EncodeToString(b[:])
	if err := Exec(ctx, dsn, "CREATE SCHEMA "+name); err != nil {
		return "", nil, fmt.Errorf("create schema %s: %w", name, err)
	}
	return name, func() error {
		if err := Exec(context.Background(), dsn, "DROP SCHEMA IF EXISTS "+name+" CASCADE"); err != nil {
			return fmt.Errorf("drop schema %s: %w", name, err)
		}
		return nil
	}, nil
}
