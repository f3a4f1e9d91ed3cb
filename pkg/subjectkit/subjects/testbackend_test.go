package subjects

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// The tests run against SQLite, and against PostgreSQL with
// ANIMUS_SUBJECT_TEST_BACKEND=postgres (make unit does both): the rules
// are the same whatever keeps the subjects.
const testBackendEnv = "ANIMUS_SUBJECT_TEST_BACKEND"

// testPrefix names the rule variables the tests set (the SQLite plugin's).
const testPrefix = "ANIMUS_SQLITE"

var envKinds, envDispatchHints, envWatchPollMS = RuleNames(testPrefix)

// envBusyTimeoutMS sets the SQLite store's busy timeout in tests.
const envBusyTimeoutMS = "ANIMUS_SQLITE_BUSY_TIMEOUT_MS"

func onPostgres() bool { return os.Getenv(testBackendEnv) == "postgres" }

// testLazy opens PostgreSQL on the first call, as animus-subject-postgres
// does; SQLite opens at initialize.
func testLazy() bool { return onPostgres() }

// sqliteOnly skips a test that is about SQLite itself, saying why.
func sqliteOnly(t *testing.T, why string) {
	t.Helper()
	if onPostgres() {
		t.Skipf("SQLite only: %s", why)
	}
}

// testBackend returns the Open of a fresh, empty database and, on SQLite,
// the file's path.
func testBackend(t *testing.T, env map[string]string, rules Rules) (func(ctx context.Context, root string, onCommit func()) (storage.Store, error), string) {
	t.Helper()
	if onPostgres() {
		return postgresBackend(t, rules), ""
	}
	busy := 5 * time.Second
	if v := env[envBusyTimeoutMS]; v != "" {
		d, err := Millis(func(string) string { return v }, envBusyTimeoutMS, busy, 1, 600_000)
		if err != nil {
			t.Fatal(err)
		}
		busy = d
	}
	path := filepath.Join(t.TempDir(), "subjects.db")
	return func(ctx context.Context, _ string, onCommit func()) (storage.Store, error) {
		return sqlitestore.Open(ctx, sqlitestore.Options{Path: path, BusyTimeout: busy, AutoMigrate: true, Hints: rules.Hints, OnCommit: onCommit})
	}, path
}
