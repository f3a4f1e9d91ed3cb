package steplog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// clock is a settable clock shared by every Store handle of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Each reading moves on by 1 µs, so timestamps are distinct and ordered
	// the way real transactions are.
	c.t = c.t.Add(time.Microsecond)
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is one step log (a SQLite file, or on PostgreSQL a fresh
// schema: $ANIMUS_DURABLE_TEST_BACKEND), its clock, a first log on it and
// a raw connection for checks the log's operations do not offer.
type fixture struct {
	t     *testing.T
	path  string // sqlite: the database file
	dsn   string // postgres: the test cluster
	pgNS  string // postgres: the namespace's schema
	clock *clock
	db    *sqlitex.DB // sqlite: the raw connection
	pg    *pgx.Conn   // postgres: the raw connection, search_path = pgNS
	*Log
}

// testBackend is the backend the tests run on: $ANIMUS_DURABLE_TEST_BACKEND,
// sqlite (default) or postgres.
func testBackend() string {
	if os.Getenv("ANIMUS_DURABLE_TEST_BACKEND") == "postgres" {
		return "postgres"
	}
	return "sqlite"
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: newClock()}
	if testBackend() == "postgres" {
		f.dsn = pgtest.DSN(t)
		f.pgNS = pgtest.Schema(t, f.dsn)
		f.Log = f.open()
		f.pg = pgtest.Connect(t, f.dsn)
		if _, err := f.pg.Exec(context.Background(), "SET search_path TO "+f.pgNS); err != nil {
			t.Fatal(err)
		}
		return f
	}
	f.path = filepath.Join(t.TempDir(), "durable.sqlite")
	f.Log = f.open()
	db, err := sqlitex.Open(context.Background(), sqlitex.Options{Path: f.path, BusyTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db = db
	return f
}

// open returns another log on the same file (or schema): its own store
// and connection pool, which is how a second plugin process sees the
// database.
func (f *fixture) open() *Log {
	f.t.Helper()
	var st storage.Store
	var err error
	if f.pgNS != "" {
		var db *pgkit.DB
		db, err = pgkit.Open(pgkit.Options{DSN: f.dsn, Schema: f.pgNS, MaxConns: 4, AppName: "steplog-test"})
		if err == nil {
			st, err = pgstore.Open(context.Background(), pgstore.Options{DB: db, LockTimeout: 20 * time.Second})
		}
	} else {
		st, err = sqlitestore.Open(context.Background(), f.path, sqlitestore.Options{BusyTimeout: 20 * time.Second})
	}
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { st.Close() })
	return New(st, f.clock.Now)
}

// rawQueryRow reads the database behind the log's back; the statement is
// SQLite's, with its ? placeholders turned into $1, $2, … on PostgreSQL.
func (f *fixture) rawQueryRow(query string, args ...any) interface{ Scan(...any) error } {
	f.t.Helper()
	if f.pg != nil {
		return f.pg.QueryRow(context.Background(), dollars(query), args...)
	}
	return f.db.QueryRow(query, args...)
}

// rawExec changes the database behind the log's back, as rawQueryRow.
func (f *fixture) rawExec(query string, args ...any) error {
	f.t.Helper()
	if f.pg != nil {
		_, err := f.pg.Exec(context.Background(), dollars(query), args...)
		return err
	}
	_, err := f.db.Exec(query, args...)
	return err
}

// dollars rewrites SQLite's ? placeholders as PostgreSQL's $1, $2, ….
func dollars(query string) string {
	for n := 1; strings.Contains(query, "?"); n++ {
		query = strings.Replace(query, "?", fmt.Sprintf("$%d", n), 1)
	}
	return query
}

func (f *fixture) run(runID, phaseID string) uint64 {
	f.t.Helper()
	e, err := f.BeginWorkflowRun(context.Background(), runID, phaseID, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return e
}

func req(runID, phaseID, name, key string, ttl time.Duration) StepRequest {
	return StepRequest{Identity: storage.Identity{RunID: runID, PhaseID: phaseID, StepName: name}, IdempotencyKey: key, TTL: ttl}
}

func (f *fixture) begin(r StepRequest) BeginResult {
	f.t.Helper()
	res, err := f.BeginStep(context.Background(), r)
	if err != nil {
		f.t.Fatalf("begin_step %s: %v", r.IdempotencyKey, err)
	}
	return res
}

func (f *fixture) commit(stepID, outcome, output, errJSON string) {
	f.t.Helper()
	c := Commit{StepID: stepID, Outcome: outcome}
	if output != "" {
		c.Output = []byte(output)
	}
	if errJSON != "" {
		c.Error = []byte(errJSON)
	}
	if err := f.CommitStep(context.Background(), c); err != nil {
		f.t.Fatalf("commit_step %s: %v", stepID, err)
	}
}

// count returns the number of step rows in a state for a key.
func (f *fixture) count(key, state string) int {
	f.t.Helper()
	var n int
	if err := f.rawQueryRow(`SELECT count(*) FROM steps WHERE idempotency_key = ? AND state = ?`, key, state).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}
