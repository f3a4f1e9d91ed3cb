package pgkit_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

var migrations = []pgkit.Migration{
	{Version: 1, Name: "counters", Up: []string{`CREATE TABLE counters (name text PRIMARY KEY, n int NOT NULL)`}},
	{Version: 2, Name: "seed", Up: []string{`INSERT INTO counters (name, n) VALUES ('hits', 0)`}},
	{Version: 3, Name: "log", Up: []string{`CREATE TABLE log (id bigserial PRIMARY KEY)`, `INSERT INTO log DEFAULT VALUES`}},
}

// Sixteen DBs (standing in for processes on several hosts) migrate a new
// schema at once: each migration is applied exactly once.
func TestMigrateConcurrent(t *testing.T) {
	dsn := pgtest.DSN(t)
	// Not pgtest.Schema: Migrate itself must create the schema.
	schema := pgtest.Schema(t, dsn)
	if _, err := pgtest.Connect(t, dsn).Exec(context.Background(), "DROP SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	results := make(chan [2]int, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: schema, MaxConns: 2})
			if err != nil {
				t.Error(err)
				return
			}
			defer db.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			from, to, err := db.Migrate(ctx, migrations)
			if err != nil {
				t.Error(err)
				return
			}
			results <- [2]int{from, to}
		}()
	}
	wg.Wait()
	close(results)
	applied := 0
	for r := range results {
		if r[1] != 3 {
			t.Errorf("migrated to %d, want 3", r[1])
		}
		if r[0] != r[1] {
			applied++
			if r[0] != 0 {
				t.Errorf("migrated from %d, want 0 (first) or 3 (nothing to do)", r[0])
			}
		}
	}
	if applied != 1 {
		t.Errorf("%d DBs applied migrations, want exactly 1", applied)
	}
	db := open(t, dsn, schema, "")
	for q, want := range map[string]int{
		`SELECT count(*) FROM counters`:          1,
		`SELECT count(*) FROM log`:               1,
		`SELECT count(*) FROM schema_migrations`: 3,
		`SELECT max(version) FROM schema_migrations WHERE name = 'log' AND applied_at <= now()`: 3,
	} {
		if got := count(t, db, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
	if v, err := db.Version(context.Background()); err != nil || v != 3 {
		t.Errorf("Version = %d, %v", v, err)
	}
}

func TestMigrateStepsAndNewerSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := open(t, dsn, pgtest.Schema(t, dsn), "")
	ctx := context.Background()
	if v, err := db.Version(ctx); err != nil || v != 0 {
		t.Fatalf("Version before = %d, %v", v, err)
	}
	for _, tc := range []struct {
		ms       []pgkit.Migration
		from, to int
		err      error
	}{
		{migrations[:1], 0, 1, nil},
		{migrations, 1, 3, nil},
		{migrations, 3, 3, nil},
		{migrations[:2], 3, 3, pgkit.ErrNewerSchema},
	} {
		from, to, err := db.Migrate(ctx, tc.ms)
		if from != tc.from || to != tc.to || !errors.Is(err, tc.err) {
			t.Errorf("Migrate(%d migrations) = %d, %d, %v; want %d, %d, %v", len(tc.ms), from, to, err, tc.from, tc.to, tc.err)
		}
	}
	if _, _, err := db.Migrate(ctx, []pgkit.Migration{{Version: 2, Name: "gap"}}); err == nil {
		t.Error("a gap in versions was accepted")
	}
}

func TestMigrateFailureRollsBackThatStep(t *testing.T) {
	dsn := pgtest.DSN(t)
	db := open(t, dsn, pgtest.Schema(t, dsn), "")
	bad := append(migrations[:1:1], pgkit.Migration{Version: 2, Name: "bad", Up: []string{
		`INSERT INTO counters VALUES ('x', 1)`, `SELECT * FROM nowhere`}})
	from, to, err := db.Migrate(context.Background(), bad)
	if err == nil || from != 0 || to != 1 {
		t.Fatalf("Migrate = %d, %d, %v; want 0, 1, error", from, to, err)
	}
	if n := count(t, db, `SELECT count(*) FROM counters`); n != 0 {
		t.Errorf("failed step left %d rows", n)
	}
	if _, to, err := db.Migrate(context.Background(), migrations); err != nil || to != 3 {
		t.Errorf("retry after fix = %d, %v", to, err)
	}
}
