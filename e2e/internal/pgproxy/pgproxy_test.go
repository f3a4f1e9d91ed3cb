package pgproxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// dsn is pgtest.DSN without importing pkg/pgkit into the e2e module.
func dsn(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("ANIMUS_PG_TEST_DSN"); d != "" {
		return d
	}
	const why = "PostgreSQL required under CI: run via scripts/postgres.sh run -- …"
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

func connect(t *testing.T, ctx context.Context, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// setup returns a direct connection, a proxy in front of the server and a
// fresh table name.
func setup(t *testing.T) (context.Context, *pgx.Conn, *Proxy, string, string) {
	base := dsn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	target, err := Target(base)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	direct := connect(t, ctx, base)
	var b [6]byte
	_, _ = rand.Read(b[:])
	table := "pgproxy_" + hex.EncodeToString(b[:])
	if _, err := direct.Exec(ctx, "CREATE TABLE "+table+" (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })
	return ctx, direct, p, p.DSN(base), table
}

func rows(t *testing.T, ctx context.Context, c *pgx.Conn, table string) int {
	t.Helper()
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The armed cut lets COMMIT through and hides its answer: the client gets
// an error, yet the row is committed.
func TestCommitCut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		commit func(ctx context.Context, tx pgx.Tx, c *pgx.Conn) error
	}{
		// pgx sends an argument-less COMMIT as a simple Query ('Q').
		{"simple query", func(ctx context.Context, tx pgx.Tx, _ *pgx.Conn) error { return tx.Commit(ctx) }},
		// Parse/Bind/Execute/Sync of an unnamed statement.
		{"extended", func(ctx context.Context, _ pgx.Tx, c *pgx.Conn) error {
			_, err := c.PgConn().ExecParams(ctx, " commit ; ", nil, nil, nil, nil).Close()
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, direct, p, via, table := setup(t)
			c := connect(t, ctx, via)
			tx, err := c.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// Statements before COMMIT pass untouched, even when armed.
			p.ArmCommitCut()
			if _, err := tx.Exec(ctx, "INSERT INTO "+table+" VALUES ($1)", 1); err != nil {
				t.Fatal(err)
			}
			if p.CommitCuts() != 0 {
				t.Fatal("cut fired before COMMIT")
			}
			if err := tc.commit(ctx, tx, c); err == nil {
				t.Fatal("COMMIT through an armed proxy reported success")
			} else {
				t.Logf("client saw: %v", err)
			}
			if n := p.CommitCuts(); n != 1 {
				t.Errorf("CommitCuts = %d, want 1", n)
			}
			if n := rows(t, ctx, direct, table); n != 1 {
				t.Errorf("%d rows on the server, want 1 (the cut COMMIT must have committed)", n)
			}
			// One-shot: the next commit through a new connection succeeds.
			c2 := connect(t, ctx, via)
			if _, err := c2.Exec(ctx, "BEGIN; INSERT INTO "+table+" VALUES (2); COMMIT"); err != nil {
				t.Fatal(err)
			}
			if _, err := c2.Exec(ctx, "COMMIT"); err != nil { // a warning, not an error
				t.Fatal(err)
			}
			if n := rows(t, ctx, direct, table); n != 2 {
				t.Errorf("%d rows, want 2", n)
			}
		})
	}
}

func TestCutAllAndRefuse(t *testing.T) {
	ctx, _, p, via, table := setup(t)
	c := connect(t, ctx, via)
	if rows(t, ctx, c, table) != 0 {
		t.Fatal("fresh table not empty")
	}
	p.CutAll()
	if _, err := c.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("query on a cut connection succeeded")
	}
	p.Refuse(true)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if c, err := pgx.Connect(cctx, via); err == nil {
		c.Close(ctx)
		t.Error("connected while refusing")
	}
	p.Refuse(false)
	c3 := connect(t, ctx, via)
	if rows(t, ctx, c3, table) != 0 {
		t.Error("reconnect after Refuse(false) failed")
	}
}

func TestWireHelpers(t *testing.T) {
	for sql, want := range map[string]bool{
		"COMMIT": true, "commit": true, " Commit ; ": true, "COMMIT;": true, "commit work": true,
		"COMMIT TRANSACTION;": true, "COMMIT PREPARED 'x'": false, "COMMITTED": false,
		"SELECT 'COMMIT'": false, "": false, "BEGIN; COMMIT": false,
	} {
		if got := isCommit(sql); got != want {
			t.Errorf("isCommit(%q) = %v", sql, got)
		}
	}
	for _, tc := range []struct{ dsn, target, rewritten string }{
		{"postgres://u:pw@127.0.0.1:15432/animus?sslmode=disable", "127.0.0.1:15432",
			"postgres://u:pw@127.0.0.1:9/animus?sslmode=disable"},
		{"postgres://u@db/animus", "db:5432", "postgres://u@127.0.0.1:9/animus"},
		{"host=db port=6543 user=u dbname=animus", "db:6543", "user=u dbname=animus host=127.0.0.1 port=9"},
	} {
		if got, err := Target(tc.dsn); err != nil || got != tc.target {
			t.Errorf("Target(%q) = %q, %v; want %q", tc.dsn, got, err, tc.target)
		}
		if got := rewriteDSN(tc.dsn, "127.0.0.1", "9"); got != tc.rewritten {
			t.Errorf("rewriteDSN(%q) = %q, want %q", tc.dsn, got, tc.rewritten)
		}
	}
}
