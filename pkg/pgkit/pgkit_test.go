package pgkit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/jackc/pgx/v5"
)

func TestValidSchema(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"queue", true},
		{"_x", true},
		{"plugin_v2", true},
		{"a" + strings.Repeat("b", 62), true},
		{"a" + strings.Repeat("b", 63), false}, // 64 bytes: beyond NAMEDATALEN
		{"", false},
		{"Queue", false},
		{"2queue", false},
		{"que-ue", false},
		{"q ueue", false},
		{`q"; DROP TABLE x; --`, false},
		{"pg_catalog", false},
		{"pg_x", false},
	} {
		err := pgkit.ValidSchema(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidSchema(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		_, err = pgkit.Open(pgkit.Options{DSN: "postgres://u@127.0.0.1:1/db", Schema: tc.name})
		if (err == nil) != tc.ok {
			t.Errorf("Open(Schema %q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestPassword(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://alice:s3cret@db.example:5432/app?sslmode=disable", "s3cret"},
		{"postgresql://alice:p%40ss%3Aw0rd@db/app", "p@ss:w0rd"},
		{"postgres://alice:a:b@db/app", "a:b"},
		{"postgres://alice@db/app", ""},
		{"postgres://db/app", ""},
		{"postgres://alice:x@h1:5432,h2:5433/app", "x"},
		{"postgres://alice@db/app?sslmode=disable&password=fromquery", "fromquery"},
		{"postgres://alice:userinfo@db/app?password=q", "q"},
		{"host=db user=alice password=s3cret dbname=app", "s3cret"},
		{"host=db password = 'it''s' user=x", "it"}, // libpq: '' is not an escape; the value ends at the quote
		{`host=db password='it\'s a secret' user=x`, "it's a secret"},
		{`password=back\\slash`, `back\slash`},
		{"host=db user=alice", ""},
		{"password=", ""},
		{"", ""},
	} {
		if got := pgkit.Password(tc.dsn); got != tc.want {
			t.Errorf("Password(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
	}
}

// Open never dials; the first use fails as unavailable, bounded by the
// connect timeout (the bound checked is a hang detector with a wide
// margin, not a speed target), and a failed dial is not cached.
func TestOpenNeverDials(t *testing.T) {
	silent, accepted := pgtest.SilentServer(t)
	for _, tc := range []struct {
		name, host string
		connect    time.Duration
	}{
		{"refused", pgtest.ClosedAddr(t), 2 * time.Second},
		// TEST-NET-1: never routed; the dial times out (or fails at once
		// where the sandbox has no route at all).
		{"unroutable", "192.0.2.1:5432", 300 * time.Millisecond},
		// Accepts, never answers the startup message.
		{"silent", silent, 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := accepted.Load()
			db, err := pgkit.Open(pgkit.Options{
				DSN: "postgres://u:pw@" + tc.host + "/db?sslmode=disable", Schema: "s",
				ConnectTimeout: tc.connect, OpTimeout: 10 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if n := accepted.Load(); n != before {
				t.Errorf("Open made %d connections: it must not dial", n-before)
			}
			start := time.Now()
			err = db.Tx(context.Background(), pgkit.ReadWrite, func(context.Context, pgx.Tx) error {
				t.Error("fn ran without a database")
				return nil
			})
			d := time.Since(start)
			if err == nil || !pgkit.IsUnavailable(err) {
				t.Fatalf("Tx = %v, want an unavailable error", err)
			}
			if d > tc.connect+5*time.Second {
				t.Errorf("Tx failed after %s: it must give up after ConnectTimeout %s", d, tc.connect)
			}
			if strings.Contains(err.Error(), "u:pw") {
				t.Errorf("error quotes the password: %v", err)
			}
			if err := db.Ping(context.Background()); !pgkit.IsUnavailable(err) {
				t.Errorf("Ping = %v, want unavailable (a failed dial is not cached)", err)
			}
		})
	}
}

func TestOpenBadDSNHidesPassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:hunter2@127.0.0.1:notaport/db",
		"host=h password=hunter2 connect_timeout=x",
	} {
		_, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: "s"})
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(bad DSN) = %v: want an error without the password", err)
		}
	}
}

func TestIsUnavailableAndRetryable(t *testing.T) {
	for _, tc := range []struct {
		name               string
		err                error
		unavail, retryable bool
	}{
		{"nil", nil, false, false},
		{"commit unknown", pgkit.ErrCommitUnknown, true, false},
		{"wrapped commit unknown", errors.Join(errors.New("x"), pgkit.ErrCommitUnknown), true, false},
		{"timeout", pgkit.ErrTimeout, true, true},
		{"canceled", context.Canceled, false, false},
		{"plain", errors.New("boom"), false, false},
	} {
		if got := pgkit.IsUnavailable(tc.err); got != tc.unavail {
			t.Errorf("%s: IsUnavailable = %v, want %v", tc.name, got, tc.unavail)
		}
		if got := pgkit.IsRetryable(tc.err); got != tc.retryable {
			t.Errorf("%s: IsRetryable = %v, want %v", tc.name, got, tc.retryable)
		}
	}
}

func TestPingAndSearchPath(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	db := open(t, dsn, schema, "pgkit-searchpath")
	if err := db.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	var sp, app string
	err := db.Tx(context.Background(), pgkit.ReadOnly, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT current_setting('search_path'), current_setting('application_name')").Scan(&sp, &app)
	})
	if err != nil {
		t.Fatal(err)
	}
	if sp != schema || app != "pgkit-searchpath" {
		t.Errorf("search_path %q application_name %q, want %q, pgkit-searchpath", sp, app, schema)
	}
	for mode, want := range map[pgkit.TxMode][2]string{
		pgkit.ReadWrite:    {"read committed", "off"},
		pgkit.ReadOnly:     {"repeatable read", "on"},
		pgkit.Serializable: {"serializable", "off"},
	} {
		var iso, ro string
		err := db.Tx(context.Background(), mode, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')").Scan(&iso, &ro)
		})
		if err != nil || iso != want[0] || ro != want[1] {
			t.Errorf("mode %d: isolation %q read_only %q (%v), want %v", mode, iso, ro, err, want)
		}
	}
}

func open(t *testing.T, dsn, schema, app string) *pgkit.DB {
	t.Helper()
	db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: schema, AppName: app, OpTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}
