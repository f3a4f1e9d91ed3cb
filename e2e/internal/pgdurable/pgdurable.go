// Package pgdurable gives e2e tests an animus-durable-postgres of their
// own: a fresh namespace (schema) in the test cluster that
// scripts/postgres.sh runs, and the environment the plugin reads, so each
// test's step log starts empty however many tests share the cluster. The
// step log is keyed by the namespace, not by the project root: processes
// bound to different roots with the same Env share it, as daemons on
// several hosts do.
package pgdurable

import (
	"context"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/scratch"
)

// Binary is the plugin under test.
const Binary = "animus-durable-postgres"

// The plugin's variables naming its database and namespace.
const (
	EnvDSN    = "ANIMUS_DURABLE_PG_DSN"
	EnvSchema = "ANIMUS_DURABLE_PG_SCHEMA"
)

// AppName is the application_name of the plugin's sessions
// (pg_stat_activity).
const AppName = Binary

// LockClass is the first key of pgstore's namespace advisory lock
// ("DURA"); the second is hashtext(schema).
const LockClass = 0x44555241

// Store is one test's step log: where it lives and how to reach it.
type Store struct {
	DSN    string
	Schema string
}

// New makes a fresh, empty namespace for t (dropped at cleanup). Without
// a cluster it fails under CI=true and skips elsewhere, saying why
// (pgtest.DSN).
func New(t testing.TB) Store {
	t.Helper()
	dsn := pgtest.DSN(t)
	return In(t, dsn)
}

// In makes a fresh, empty namespace for t in the database dsn names (a
// private cluster's, pgtest.Own), dropped at cleanup.
func In(t testing.TB, dsn string) Store {
	t.Helper()
	return Store{DSN: dsn, Schema: pgtest.Schema(t, dsn)}
}

// Env is the plugin's environment for s, then extra ("NAME=value").
func (s Store) Env(extra ...string) []string {
	return append([]string{EnvDSN + "=" + s.DSN, EnvSchema + "=" + s.Schema}, extra...)
}

// Map is Env as a map (the conformance runner's and the fake host's form),
// with extra (NAME → value) laid on top.
func (s Store) Map(extra map[string]string) map[string]string {
	env := map[string]string{EnvDSN: s.DSN, EnvSchema: s.Schema}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// Isolate is a conformance.IsolateFunc (its signature, so that this
// package need not import the runner) giving every call a fresh schema in
// dsn's database, dropped by the returned cleanup; report receives a
// failed drop. It returns errors rather than failing a test: scenarios
// may call it from their own goroutines.
func Isolate(dsn string, report func(error)) func() (map[string]string, func(), error) {
	return func() (map[string]string, func(), error) {
		name, drop, err := scratch.NewSchema(context.Background(), dsn, "t")
		if err != nil {
			return nil, nil, err
		}
		return map[string]string{EnvSchema: name}, func() {
			if err := drop(); err != nil && report != nil {
				report(err)
			}
		}, nil
	}
}

// Unreachable is the plugin's environment overlay pointing its store at
// an address nothing answers at (port 1 on loopback refuses at once), for
// conformance.Options.Unreachable: the backend-unavailable scenarios.
func Unreachable() map[string]string {
	return map[string]string{
		EnvDSN:                                 "postgres://animus@127.0.0.1:1/animus?sslmode=disable",
		"ANIMUS_DURABLE_PG_CONNECT_TIMEOUT_MS": "1000",
	}
}
