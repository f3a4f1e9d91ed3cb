package steplog

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
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

// fixture is one database file, its clock, a first log on it and a raw
// connection for checks the log's operations do not offer.
type fixture struct {
	t     *testing.T
	path  string
	clock *clock
	db    *sqlitex.DB
	*Log
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, path: filepath.Join(t.TempDir(), "durable.sqlite"), clock: newClock()}
	f.Log = f.open()
	db, err := sqlitex.Open(context.Background(), sqlitex.Options{Path: f.path, BusyTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db = db
	return f
}

// open returns another log on the same file: its own store and
// connection pool, which is how a second plugin process sees the
// database.
func (f *fixture) open() *Log {
	f.t.Helper()
	st, err := sqlitestore.Open(context.Background(), f.path, sqlitestore.Options{BusyTimeout: 20 * time.Second})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { st.Close() })
	return New(st, f.clock.Now)
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
	if err := f.db.QueryRow(`SELECT count(*) FROM steps WHERE idempotency_key = ? AND state = ?`, key, state).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}
