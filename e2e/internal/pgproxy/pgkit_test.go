package pgproxy

import (
	"context"
	"errors"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgkit.Tx through an armed proxy: the COMMIT is applied on the server
// but its reply is lost, so Tx must report ErrCommitUnknown and must not
// run fn again (a retry would insert twice, or here fail on the key).
func TestPgkitCommitUnknown(t *testing.T) {
	ctx, direct, p, via, table := setup(t)
	db, err := pgkit.Open(pgkit.Options{DSN: via, Schema: "public", AppName: "pgproxy-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	p.ArmCommitCut()
	attempts := 0
	err = db.Tx(ctx, pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		attempts++
		_, err := tx.Exec(ctx, "INSERT INTO "+table+" VALUES (1)")
		return err
	})
	t.Logf("Tx: %v (SafeToRetry %v)", err, pgconn.SafeToRetry(err))
	if !errors.Is(err, pgkit.ErrCommitUnknown) || !pgkit.IsUnavailable(err) || pgkit.IsRetryable(err) {
		t.Errorf("Tx = %v, want ErrCommitUnknown (unavailable, not retryable)", err)
	}
	if attempts != 1 {
		t.Errorf("fn ran %d times, want 1", attempts)
	}
	if n := rows(t, ctx, direct, table); n != 1 {
		t.Errorf("%d rows, want 1", n)
	}
	// The pool recovers: the dead connection is discarded.
	if err := db.Tx(ctx, pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO "+table+" VALUES (2)")
		return err
	}); err != nil {
		t.Errorf("Tx after the cut: %v", err)
	}
}

// The connection is cut while a transaction is open and a statement
// notices (before COMMIT is sent): Tx retries the whole fn on a new
// connection. (Had fn returned nil instead, pgx would write COMMIT into
// the dead socket and the outcome would rightly be ErrCommitUnknown: the
// client cannot tell where the bytes were lost.)
func TestPgkitRetriesCutBeforeCommit(t *testing.T) {
	ctx, direct, p, via, table := setup(t)
	db, err := pgkit.Open(pgkit.Options{DSN: via, Schema: "public"})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	attempts := 0
	err = db.Tx(ctx, pgkit.ReadWrite, func(ctx context.Context, tx pgx.Tx) error {
		attempts++
		if _, err := tx.Exec(ctx, "INSERT INTO "+table+" VALUES (1)"); err != nil {
			return err
		}
		if attempts == 1 {
			p.CutAll()
			_, err := tx.Exec(ctx, "SELECT 1")
			if !pgkit.IsRetryable(err) {
				t.Errorf("statement on a cut connection: %v, want retryable", err)
			}
			return err
		}
		return nil
	})
	if err != nil || attempts != 2 {
		t.Fatalf("Tx = %v after %d attempts, want nil after 2", err, attempts)
	}
	if n := rows(t, ctx, direct, table); n != 1 {
		t.Errorf("%d rows, want 1", n)
	}
}
