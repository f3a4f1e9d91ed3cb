// Package pgqueue gives e2e tests an animus-queue-postgres of their own:
// a fresh namespace (schema) in the test cluster that scripts/postgres.sh
// runs, and the environment the plugin reads, so each test's queue starts
// empty however many tests share the cluster.
package pgqueue

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// Binary is the plugin under test.
const Binary = "animus-queue-postgres"

// Queue is one test's queue: where it lives and how to reach it.
type Queue struct {
	DSN    string
	Schema string
}

// New makes a fresh, empty namespace for t (dropped at cleanup). Without
// a cluster it fails under CI=true and skips elsewhere, saying why
// (pgtest.DSN).
func New(t testing.TB) Queue {
	t.Helper()
	dsn := pgtest.DSN(t)
	return Queue{DSN: dsn, Schema: pgtest.Schema(t, dsn)}
}

// Env is the plugin's environment for q, then extra ("NAME=value").
func (q Queue) Env(extra ...string) []string {
	return append([]string{"ANIMUS_QUEUE_PG_DSN=" + q.DSN, "ANIMUS_QUEUE_PG_SCHEMA=" + q.Schema}, extra...)
}
