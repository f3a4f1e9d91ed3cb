package pgkit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/jackc/pgx/v5"
)

func setup(t *testing.T, app string, stmts ...string) (string, *pgkit.DB) {
	t.Helper()
	dsn := pgtest.DSN(t)
	db := open(t, dsn, pgtest.Schema(t, dsn), app)
	if _, _, err := db.Migrate(context.Background(), []pgkit.Migration{{Version: 1, Name: "setup", Up: stmts}}); err != nil {
		t.Fatal(err)
	}
	return dsn, db
}

func count(t *testing.T, db *pgkit.DB, q string) int {
	t.Helper()
	var n int
	if err := db.Tx(context.Background(), pgkit.ReadOnly, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, q).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// Two SERIALIZABLE transactions each read the row count and insert it:
// write skew, so PostgreSQL fails one with 40001 and Tx must run it again.
func TestTxRetriesSerializationFailure(t *testing.T) {
	_, db := setup(t, "pgkit-serial", `CREATE TABLE seq (n int NOT NULL)`)
	var both sync.WaitGroup
	both.Add(2)
	var attempts atomic.Int32
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			err := db.Tx(context.Background(), pgkit.Serializable, func(ctx context.Context, tx pgx.Tx) error {
				attempts.Add(1)
				var n int
				if err := tx.QueryRow(ctx, `SELECT count(*) FROM seq`).Scan(&n); err != nil {
					return err
				}
				if first { // both first attempts read before either writes
					first = false
					both.Done()
					both.Wait()
				}
				_, err := tx.Exec(ctx, `INSERT INTO seq (n) VALUES ($1)`, n)
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if a := attempts.Load(); a < 3 {
		t.Errorf("%d attempts, want a retry (≥ 3)", a)
	}
	if n := count(t, db, `SELECT count(DISTINCT n) FROM seq`); n != 2 {
		t.Errorf("%d distinct values, want 0 and 1", n)
	}
}

// Two transactions lock two rows in opposite orders: one gets 40P01.
func TestTxRetriesDeadlock(t *testing.T) {
	_, db := setup(t, "pgkit-deadlock", `CREATE TABLE acct (id int PRIMARY KEY, n int NOT NULL)`,
		`INSERT INTO acct VALUES (1, 0), (2, 0)`)
	var both sync.WaitGroup
	both.Add(2)
	var attempts atomic.Int32
	var wg sync.WaitGroup
	for _, order := range [][2]int{{1, 2}, {2, 1}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			err := db.Tx(context.Background(), pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
				attempts.Add(1)
				for i, id := range order {
					if _, err := tx.Exec(ctx, `UPDATE acct SET n = n + 1 WHERE id = $1`, id); err != nil {
						return err
					}
					if i == 0 && first {
						first = false
						both.Done()
						both.Wait()
					}
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if a := attempts.Load(); a < 3 {
		t.Errorf("%d attempts, want a retry (≥ 3)", a)
	}
	if n := count(t, db, `SELECT sum(n) FROM acct`); n != 4 {
		t.Errorf("sum %d, want 4 (each transaction committed once)", n)
	}
}

// The session is terminated mid-transaction (57P01 before COMMIT): fn
// runs again and the row is committed exactly once.
func TestTxRetriesTerminatedSession(t *testing.T) {
	const app = "pgkit-terminate"
	dsn, db := setup(t, app, `CREATE TABLE ev (id int PRIMARY KEY)`)
	attempts := 0
	err := db.Tx(context.Background(), pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		attempts++
		if _, err := tx.Exec(ctx, `INSERT INTO ev VALUES (1)`); err != nil {
			return err
		}
		if attempts == 1 {
			if n, err := pgtest.TerminateApp(ctx, dsn, app); err != nil || n != 1 {
				t.Errorf("terminated %d sessions (%v), want 1", n, err)
			}
			_, err := tx.Exec(ctx, `SELECT 1`)
			if !pgkit.IsUnavailable(err) {
				t.Errorf("statement on a terminated session: %v, want unavailable", err)
			}
			return err
		}
		return nil
	})
	if err != nil || attempts != 2 {
		t.Fatalf("Tx = %v after %d attempts, want nil after 2", err, attempts)
	}
	if n := count(t, db, `SELECT count(*) FROM ev`); n != 1 {
		t.Errorf("%d rows, want 1", n)
	}
}

// The server restarts (pg_ctl restart -m fast) while fn is running; the
// pool's connections all die and Tx rides it out. A private cluster: a
// restart of the shared one would break the other packages' tests.
func TestTxSurvivesRestart(t *testing.T) {
	cluster := pgtest.Own(t)
	db := open(t, cluster.DSN, pgtest.Schema(t, cluster.DSN), "pgkit-restart")
	if _, _, err := db.Migrate(context.Background(), []pgkit.Migration{{Version: 1, Name: "setup", Up: []string{`CREATE TABLE ev (id int PRIMARY KEY)`}}}); err != nil {
		t.Fatal(err)
	}
	count(t, db, `SELECT count(*) FROM ev`) // a pooled connection to lose
	attempts := 0
	err := db.Tx(context.Background(), pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		attempts++
		if attempts == 1 {
			cluster.Restart(t)
		}
		_, err := tx.Exec(ctx, `INSERT INTO ev VALUES (1)`)
		return err
	})
	if err != nil || attempts < 2 {
		t.Fatalf("Tx = %v after %d attempts, want nil after ≥ 2", err, attempts)
	}
	if n := count(t, db, `SELECT count(*) FROM ev`); n != 1 {
		t.Errorf("%d rows, want 1", n)
	}
}

// A deferred constraint trigger terminates its own session while COMMIT
// runs: the client sees the connection die with COMMIT in flight, so the
// outcome is unknown and fn must not run again.
func TestTxCommitUnknownNotRetried(t *testing.T) {
	_, db := setup(t, "pgkit-commit",
		`CREATE TABLE c (id int)`,
		`CREATE FUNCTION die() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(1); RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER die AFTER INSERT ON c DEFERRABLE INITIALLY DEFERRED
		 FOR EACH ROW EXECUTE FUNCTION die()`)
	attempts := 0
	err := db.Tx(context.Background(), pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		attempts++
		_, err := tx.Exec(ctx, `INSERT INTO c VALUES (1)`)
		return err
	})
	if !errors.Is(err, pgkit.ErrCommitUnknown) || !pgkit.IsUnavailable(err) || pgkit.IsRetryable(err) {
		t.Fatalf("Tx = %v, want ErrCommitUnknown, unavailable, not retryable", err)
	}
	if attempts != 1 {
		t.Errorf("fn ran %d times, want 1", attempts)
	}
}

var errMine = errors.New("mine")

type myErr struct{ code int }

func (e *myErr) Error() string { return "my error" }

func TestTxPassesFnErrorsThrough(t *testing.T) {
	_, db := setup(t, "pgkit-errs", `CREATE TABLE u (id int PRIMARY KEY)`, `INSERT INTO u VALUES (1)`)
	for _, tc := range []struct {
		name  string
		fn    func(ctx context.Context, tx pgx.Tx) error
		check func(error) bool
	}{
		{"sentinel", func(context.Context, pgx.Tx) error { return errMine }, func(e error) bool { return e == errMine }},
		{"typed", func(context.Context, pgx.Tx) error { return &myErr{7} }, func(e error) bool {
			var m *myErr
			return errors.As(e, &m) && m.code == 7
		}},
		{"unique violation", func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO u VALUES (1)`)
			return err
		}, func(e error) bool { return pgkit.SQLState(e) == "23505" && !pgkit.IsUnavailable(e) }},
	} {
		attempts := 0
		err := db.Tx(context.Background(), pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
			attempts++
			return tc.fn(ctx, tx)
		})
		if !tc.check(err) || attempts != 1 {
			t.Errorf("%s: Tx = %v after %d attempts", tc.name, err, attempts)
		}
	}
}

func TestTxOpTimeout(t *testing.T) {
	dsn := pgtest.DSN(t)
	db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: pgtest.Schema(t, dsn), OpTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	err = db.Tx(context.Background(), pgkit.ReadOnly, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT pg_sleep(5)`)
		return err
	})
	if !errors.Is(err, pgkit.ErrTimeout) || !pgkit.IsUnavailable(err) {
		t.Errorf("Tx = %v, want ErrTimeout", err)
	}
	// The statement would sleep 5 s: returning before that is what shows
	// the timeout cut it (a wide margin, not a speed target).
	if d := time.Since(start); d >= 5*time.Second {
		t.Errorf("took %s: the attempt was not cut at OpTimeout", d)
	}
}
