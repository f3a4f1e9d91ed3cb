package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// fixture is a Service served in process (see serve), bound to a temp
// project, with a clock the test moves and ids it can predict (id-1, id-2,
// …, shared by entries and minted workflow ids).
type fixture struct {
	t   *testing.T
	cfg testConfig
	s   *Service
	h   *pluginkittest.Host
	dir string
	now time.Time
	ids int
	wfs int // workflow ids handed to queue/v2/lease

	initResult json.RawMessage
}

// testConfig is what a fixture varies: the shared rules and the SQLite
// store's settings.
type testConfig struct {
	Rules
	DBPath      string // relative to the project root; default .animus/queue.sqlite
	BusyTimeout time.Duration
}

// options completes o with c's rules and the test backend's store
// ($ANIMUS_QUEUE_TEST_BACKEND): a SQLite store under the bound root,
// opened as animus-queue-sqlite opens it, or a PostgreSQL namespace of the
// bound root (see pgOpen).
func (c testConfig) options(t *testing.T, o Options) Options {
	o.Rules = c.Rules
	if testBackend() == "postgres" {
		o.Open = pgOpen(t, c)
		return o
	}
	o.Open = func(ctx context.Context, root string) (storage.Store, error) {
		path := c.DBPath
		if path == "" {
			path = ".animus/queue.sqlite"
		}
		return sqlitestore.Open(ctx, sqlitestore.Options{Path: filepath.Join(root, path), BusyTimeout: c.BusyTimeout})
	}
	return o
}

var t0 = time.Date(2026, 6, 14, 12, 0, 0, 123456789, time.UTC)

func newFixture(t *testing.T, cfg testConfig) *fixture {
	t.Helper()
	f := &fixture{t: t, cfg: cfg, dir: t.TempDir(), now: t0}
	f.s = New(cfg.options(t, Options{
		Now:   func() time.Time { return f.now },
		NewID: func() string { f.ids++; return fmt.Sprintf("id-%d", f.ids) },
	}))
	if err := f.serve(bound(rootBinding(f.dir))); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return f
}

// want checks an exact result (params and result are JSON as sent, ""
// for no params).
func (f *fixture) want(method, params, result string) {
	f.t.Helper()
	if got := f.h.OK(f.t, method, params, nil); string(got) != result {
		f.t.Errorf("%s %s\n got %s\nwant %s", method, params, got, result)
	}
}

// wantErr checks an error reply's code, message (substring) and data.
func (f *fixture) wantErr(method, params string, code int, msg string, data map[string]any) {
	f.t.Helper()
	checkErr(f.t, f.h.Fails(f.t, method, params, code, ""), code, msg, data)
}

// checkErr checks that err is an error reply with code, a message
// containing msg, and data holding data (compared as JSON).
func checkErr(t *testing.T, err error, code int, msg string, data map[string]any) {
	t.Helper()
	e, ok := pluginkittest.AsRPCError(err)
	if !ok {
		t.Fatalf("error %v (%T), want an error reply %d", err, err, code)
	}
	if e.Code != code || !strings.Contains(e.Message, msg) {
		t.Errorf("error %d %q, want %d containing %q", e.Code, e.Message, code, msg)
	}
	for k, v := range data {
		if got, _ := json.Marshal(e.Data[k]); string(got) != mustJSON(v) {
			t.Errorf("error data %s = %s, want %s", k, got, mustJSON(v))
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// enqueue adds an entry for subject (a legacy task id, or "kind::id") and
// returns its id.
func (f *fixture) enqueue(subject string, extra string) string {
	f.t.Helper()
	subj := `{"Task":{"id":"` + subject + `"}}`
	if kind, id, ok := strings.Cut(subject, "::"); ok {
		subj = `{"kind":"` + kind + `","id":"` + id + `"}`
	}
	params := `{"subject_dispatch":{"requested_at":"2026-06-14T11:00:00Z","subject":` + subj +
		`,"trigger_source":"test","workflow_ref":"standard"}` + extra + `}`
	var r struct {
		EntryID string `json:"entry_id"`
	}
	f.h.OK(f.t, "queue/enqueue", params, &r)
	return r.EntryID
}

// states returns "id:status" in queue order.
func (f *fixture) states() string {
	f.t.Helper()
	var r struct {
		Entries []struct {
			EntryID string `json:"entry_id"`
			Status  string `json:"status"`
		} `json:"entries"`
	}
	f.h.OK(f.t, "queue/list", "", &r)
	var parts []string
	for _, e := range r.Entries {
		parts = append(parts, e.EntryID+":"+e.Status)
	}
	return strings.Join(parts, " ")
}

// checkCounts compares the stats (kept by triggers) with the statuses the
// list actually shows.
func (f *fixture) checkCounts() {
	f.t.Helper()
	var r struct {
		Entries []struct {
			Status string `json:"status"`
		} `json:"entries"`
		Stats map[string]int `json:"stats"`
	}
	f.h.OK(f.t, "queue/list", "", &r)
	real := map[string]int{"total": len(r.Entries)}
	for _, e := range r.Entries {
		real[e.Status]++
	}
	for _, k := range []string{"pending", "assigned", "held", "total"} {
		if r.Stats[k] != real[k] {
			f.t.Errorf("stats.%s = %d, the list shows %d", k, r.Stats[k], real[k])
		}
	}
}

// audit returns the store's audit trail as "entry method from>to reason".
func (f *fixture) audit() []string {
	f.t.Helper()
	st, err := f.s.open(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	err = st.View(context.Background(), func(r storage.Store) error {
		trail, err := r.AuditTrail(context.Background(), "", 1000)
		for _, a := range trail {
			from, reason := "-", ""
			if a.From != nil {
				from = *a.From
			}
			if a.Reason != nil {
				reason = " " + *a.Reason
			}
			out = append(out, fmt.Sprintf("%s %s %s>%s%s", a.EntryID, a.Method, from, a.To, reason))
		}
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// testBackend is the backend the tests run on: $ANIMUS_QUEUE_TEST_BACKEND,
// sqlite (default) or postgres.
func testBackend() string {
	if os.Getenv("ANIMUS_QUEUE_TEST_BACKEND") == "postgres" {
		return "postgres"
	}
	return "sqlite"
}

// sqliteOnly skips a test that is about SQLite by nature when the suite
// runs on PostgreSQL.
func sqliteOnly(t *testing.T, why string) {
	t.Helper()
	if testBackend() == "postgres" {
		t.Skip("SQLite only (ANIMUS_QUEUE_TEST_BACKEND=postgres): " + why)
	}
}

// pgOpen opens the bound root's namespace (a fresh schema on first use,
// dropped when the test ends) with pgstore, as a PostgreSQL queue plugin
// would. testConfig.BusyTimeout is the lock timeout.
func pgOpen(t *testing.T, c testConfig) func(ctx context.Context, root string) (storage.Store, error) {
	dsn := pgtest.DSN(t) // on the test goroutine: it may skip
	return func(ctx context.Context, root string) (storage.Store, error) {
		db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: pgtest.SchemaFor(t, dsn, root), MaxConns: 2, AppName: "queue-test"})
		if err != nil {
			return nil, err
		}
		t.Cleanup(db.Close)
		return pgstore.Open(ctx, pgstore.Options{DB: db, ProjectRoot: root, LockTimeout: c.BusyTimeout})
	}
}

// backendSQL picks the statement of the backend under test.
func backendSQL(sqlite, postgres string) string {
	if testBackend() == "postgres" {
		return postgres
	}
	return sqlite
}

func (f *fixture) dbPath() string {
	sqliteOnly(f.t, "the test reads the SQLite file path")
	return filepath.Join(f.dir, ".animus", "queue.sqlite")
}
