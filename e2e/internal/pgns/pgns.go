// Package pgns gives e2e tests a PostgreSQL plugin's namespace of their
// own: a fresh schema in the test cluster that scripts/postgres.sh runs,
// and the environment the plugin reads, so each test's queue, step log or
// subjects start empty however many tests share the cluster. The data is
// keyed by the namespace, not by the project root: processes bound to
// different roots with the same Env share it, as daemons on several hosts
// do.
package pgns

import (
	"context"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/scratch"
)

// Plugin is a PostgreSQL plugin: its binary and the prefix of its
// settings (<Prefix>_DSN, <Prefix>_SCHEMA, <Prefix>_CONNECT_TIMEOUT_MS).
type Plugin struct {
	Binary string // also the application_name of its sessions
	Prefix string
}

// The PostgreSQL plugins.
var (
	Queue   = Plugin{Binary: "animus-queue-postgres", Prefix: "ANIMUS_QUEUE_PG"}
	Durable = Plugin{Binary: "animus-durable-postgres", Prefix: "ANIMUS_DURABLE_PG"}
	Subject = Plugin{Binary: "animus-subject-postgres", Prefix: "ANIMUS_SUBJECT_PG"}
)

// EnvDSN and EnvSchema name the plugin's database and namespace settings.
func (p Plugin) EnvDSN() string    { return p.Prefix + "_DSN" }
func (p Plugin) EnvSchema() string { return p.Prefix + "_SCHEMA" }

// NS is one test's namespace of plugin p: where it lives and how to reach
// it.
type NS struct {
	Plugin
	DSN    string
	Schema string
}

// New makes a fresh, empty namespace for t (dropped at cleanup). Without
// a cluster it fails under CI=true and skips elsewhere, saying why
// (pgtest.DSN).
func (p Plugin) New(t testing.TB) NS {
	t.Helper()
	return p.In(t, pgtest.DSN(t))
}

// In makes a fresh, empty namespace for t in the database dsn names (a
// private cluster's, pgtest.Own), dropped at cleanup.
func (p Plugin) In(t testing.TB, dsn string) NS {
	t.Helper()
	return NS{Plugin: p, DSN: dsn, Schema: pgtest.Schema(t, dsn)}
}

// Env is the plugin's environment for n, then extra ("NAME=value").
func (n NS) Env(extra ...string) []string {
	return append([]string{n.EnvDSN() + "=" + n.DSN, n.EnvSchema() + "=" + n.Schema}, extra...)
}

// Map is Env as a map (the conformance runner's and the fake host's form),
// with extra (NAME → value) laid on top.
func (n NS) Map(extra map[string]string) map[string]string {
	env := map[string]string{n.EnvDSN(): n.DSN, n.EnvSchema(): n.Schema}
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
func (p Plugin) Isolate(dsn string, report func(error)) func() (map[string]string, func(), error) {
	return func() (map[string]string, func(), error) {
		name, drop, err := scratch.NewSchema(context.Background(), dsn, "t")
		if err != nil {
			return nil, nil, err
		}
		return map[string]string{p.EnvSchema(): name}, func() {
			if err := drop(); err != nil && report != nil {
				report(err)
			}
		}, nil
	}
}

// Isolated is Isolate for n's database, reporting a failed drop to t
// (whose Errorf is safe from the scenarios' goroutines).
func (n NS) Isolated(t testing.TB) func() (map[string]string, func(), error) {
	return n.Isolate(n.DSN, func(err error) { t.Errorf("%v", err) })
}

// Unreachable is the plugin's environment overlay pointing it at an
// address nothing answers at (port 1 on loopback refuses at once), for
// conformance.Options.Unreachable: the backend-unavailable scenarios.
func (p Plugin) Unreachable() map[string]string {
	return map[string]string{
		p.EnvDSN():                       "postgres://animus@127.0.0.1:1/animus?sslmode=disable",
		p.Prefix + "_CONNECT_TIMEOUT_MS": "1000",
	}
}
