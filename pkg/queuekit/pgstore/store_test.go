package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// openT opens a Store on a fresh schema of the test cluster.
func openT(t *testing.T) *Store {
	t.Helper()
	dsn := pgtest.DSN(t)
	return openSchema(t, dsn, pgtest.Schema(t, dsn), time.Second)
}

// openSchema opens another Store on schema (closed at cleanup).
func openSchema(t *testing.T, dsn, schema string, lockTimeout time.Duration) *Store {
	t.Helper()
	db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: schema, MaxConns: 4, AppName: "pgstore-test"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(context.Background(), Options{DB: db, ProjectRoot: "/work/proj", LockTimeout: lockTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func entry(id, key, state string) *storage.Entry {
	return &storage.Entry{ID: id, State: state, SubjectKey: key, WorkflowRef: "w", EnqueuedAt: "t", Dispatch: []byte(`{}`)}
}

func update(t *testing.T, st *Store, fn func(tx storage.Store) error) {
	t.Helper()
	if err := st.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func view(t *testing.T, st *Store, fn func(r storage.Store)) {
	t.Helper()
	if err := st.View(context.Background(), func(r storage.Store) error { fn(r); return nil }); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

func ids(es []*storage.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func equal(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

func TestOpenMigratesOnceUnderConcurrentStarts(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: schema, MaxConns: 1})
			if err != nil {
				errs <- err
				return
			}
			st, err := Open(context.Background(), Options{DB: db})
			if err != nil {
				errs <- err
				return
			}
			st.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent open: %v", err)
	}
	st := openSchema(t, dsn, schema, time.Second)
	if v, err := st.db.Version(context.Background()); err != nil || v != SchemaVersion() {
		t.Errorf("version %d, %v; want %d", v, err, SchemaVersion())
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	openSchema(t, dsn, schema, time.Second)
	c := pgtest.Connect(t, dsn)
	if _, err := c.Exec(context.Background(), `INSERT INTO `+schema+`.schema_migrations (version, name) VALUES (99, 'future')`); err != nil {
		t.Fatal(err)
	}
	db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), Options{DB: db}); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("open of a newer schema: %v, want ErrNewerSchema", err)
	}
}

// holdLock keeps an Update open on st until release is called; held is
// closed once the namespace lock is taken.
func holdLock(t *testing.T, st *Store) (release func(), held chan struct{}) {
	t.Helper()
	held = make(chan struct{})
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- st.Update(context.Background(), func(tx storage.Store) error {
			close(held)
			<-stop
			return nil
		})
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			if err := <-done; err != nil {
				t.Errorf("lock holder: %v", err)
			}
		})
	}, held
}

func TestLockTimeoutIsReported(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	holder := openSchema(t, dsn, schema, time.Second)
	other := openSchema(t, dsn, schema, 80*time.Millisecond)
	// Another namespace in the same database has its own lock.
	elsewhere := openSchema(t, dsn, pgtest.Schema(t, dsn), 80*time.Millisecond)
	release, held := holdLock(t, holder)
	defer release()
	<-held
	start := time.Now()
	ran := false
	err := other.Update(context.Background(), func(tx storage.Store) error { ran = true; return nil })
	var ue *storage.UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(ue.Reason, "another process held the queue for longer than the lock timeout (80ms); retry") {
		t.Fatalf("update beside a writer: %v, want the lock timeout", err)
	}
	if ran {
		t.Error("fn ran without the namespace lock")
	}
	// It waited for the lock (at least about the timeout) and gave up
	// (the upper bound is a hang detector, far above any real wait).
	if d := time.Since(start); d < 60*time.Millisecond || d > 30*time.Second {
		t.Errorf("gave up after %v", d)
	}
	if strings.Contains(ue.Reason, dsn) {
		t.Error("the reason carries the DSN")
	}
	// Reads are not blocked by the writer.
	if err := other.View(context.Background(), func(r storage.Store) error {
		_, err := r.Counts(context.Background(), 0)
		return err
	}); err != nil {
		t.Errorf("read beside a writer: %v", err)
	}
	if err := elsewhere.Update(context.Background(), func(tx storage.Store) error { return nil }); err != nil {
		t.Errorf("another namespace waited for this one's lock: %v", err)
	}
}

func TestUnreachableIsUnavailable(t *testing.T) {
	const dsn = "postgres://queue:s3cret-pw@127.0.0.1:1/none?sslmode=disable"
	db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: "q", ConnectTimeout: time.Second, OpTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st := newStore(Options{DB: db})
	defer st.Close()
	for name, call := range map[string]func() error{
		"update": func() error {
			return st.Update(context.Background(), func(storage.Store) error { return nil })
		},
		"view": func() error { return st.View(context.Background(), func(storage.Store) error { return nil }) },
		"ping": func() error { return st.Ping(context.Background()) },
	} {
		start := time.Now()
		err := call()
		var ue *storage.UnavailableError
		if !errors.As(err, &ue) || ue.Reason != "queue database unavailable: cannot reach PostgreSQL; retry" {
			t.Errorf("%s: %v (%T), want *storage.UnavailableError", name, err, err)
		}
		if d := time.Since(start); d > 30*time.Second { // a hang detector, not a speed target
			t.Errorf("%s took %v", name, d)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("%s: the error carries the password: %v", name, err)
		}
	}
	db2, _ := pgkit.Open(pgkit.Options{DSN: dsn, Schema: "q", ConnectTimeout: time.Second})
	var ue *storage.UnavailableError
	if _, err := Open(context.Background(), Options{DB: db2}); !errors.As(err, &ue) {
		t.Errorf("open: %v, want *storage.UnavailableError", err)
	}
}

func TestQueueErrorsPassThrough(t *testing.T) {
	st := openT(t)
	mine := pluginkit.Errorf(pluginkit.CategoryConflict, "mine")
	if err := st.Update(context.Background(), func(storage.Store) error { return mine }); err != mine {
		t.Errorf("update returned %v, want the queue's own error unchanged", err)
	}
	if err := st.View(context.Background(), func(storage.Store) error { return mine }); err != mine {
		t.Errorf("view returned %v, want the queue's own error unchanged", err)
	}
}

func TestUpdateRollsBackOnError(t *testing.T) {
	st := openT(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := st.Update(ctx, func(tx storage.Store) error {
		if err := tx.Insert(ctx, entry("a", "K", "pending")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("update error %v", err)
	}
	view(t, st, func(r storage.Store) {
		if e, err := r.Get(ctx, "a"); err != nil || e != nil {
			t.Errorf("rolled-back insert is visible: %+v %v", e, err)
		}
		if c, _ := r.Counts(ctx, 0); c.Total() != 0 {
			t.Errorf("rolled-back insert counted: %+v", c)
		}
	})
}

func TestQueries(t *testing.T) {
	st := openT(t)
	ctx := context.Background()
	const now = int64(1_000)
	rows := []*storage.Entry{
		entry("a", "A", "pending"),
		entry("b", "B", "assigned"),
		entry("c", "A", "pending"), // due: run_at == now
		entry("d", "D", "pending"), // deferred
		entry("e", "E", "held"),
		entry("f", "F", "pending"), // unparseable run_at: due
		entry("g", "G", "assigned"),
	}
	rows[2].RunAt, rows[2].RunAtNS = ptr("now"), ptr(now)
	rows[3].RunAt, rows[3].RunAtNS = ptr("later"), ptr(now+1)
	rows[5].RunAt = ptr("garbage")
	rows[1].AssignedAtNS = ptr(now)
	rows[6].AssignedAtNS = ptr(now + 1)
	update(t, st, func(tx storage.Store) error {
		for _, e := range rows {
			if err := tx.Insert(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	for i, e := range rows {
		if e.Ordinal != int64(i+1) {
			t.Errorf("%s has ordinal %d, want %d (append order)", e.ID, e.Ordinal, i+1)
		}
	}
	for _, bind := range []struct {
		name string
		run  func(func(storage.Store)) // View, and Update (row locks)
	}{
		{"view", func(fn func(storage.Store)) { view(t, st, fn) }},
		{"update", func(fn func(storage.Store)) {
			update(t, st, func(tx storage.Store) error { fn(tx); return nil })
		}},
	} {
		bind.run(func(r storage.Store) {
			for _, tc := range []struct {
				reclaim *int64
				want    []string
			}{{nil, []string{"a", "c", "f"}}, {ptr(now), []string{"a", "b", "c", "f"}}} {
				var got []string
				if err := r.Leasable(ctx, now, tc.reclaim, func(e *storage.Entry) bool { got = append(got, e.ID); return true }); err != nil {
					t.Fatal(err)
				}
				if !equal(got, tc.want) {
					t.Errorf("%s: leasable(reclaim=%v) = %v, want %v", bind.name, tc.reclaim, got, tc.want)
				}
			}
			var first []string
			_ = r.Leasable(ctx, now, nil, func(e *storage.Entry) bool { first = append(first, e.ID); return false })
			if !equal(first, []string{"a"}) {
				t.Errorf("the walk did not stop when asked: %v", first)
			}
			c, err := r.Counts(ctx, now)
			if err != nil || c != (storage.Counts{Pending: 4, Assigned: 2, Held: 1, Deferred: 1}) || c.Total() != 7 {
				t.Errorf("counts %+v, %v", c, err)
			}
			list, total, err := r.List(ctx, []string{"pending", "held", "bogus"}, ptr(uint64(2)), 1)
			if err != nil || total != 5 || len(list) != 2 || list[0].ID != "c" || list[1].ID != "d" {
				t.Errorf("list: total %d, %v, %v", total, ids(list), err)
			}
			list, total, _ = r.List(ctx, []string{"bogus"}, nil, 0)
			if total != 0 || list == nil || len(list) != 0 {
				t.Errorf("unknown status matched %d (%#v)", total, list)
			}
			list, _, _ = r.List(ctx, nil, nil, 1<<63+5)
			if len(list) != 0 {
				t.Errorf("huge offset returned %v", ids(list))
			}
			list, total, _ = r.List(ctx, nil, nil, 0)
			if total != 7 || len(list) != 7 {
				t.Errorf("list all: %d of %d", len(list), total)
			}
			if n, _ := r.CountSubject(ctx, "A"); n != 2 {
				t.Errorf("count subject A = %d", n)
			}
			next, err := r.NextRunAt(ctx, now)
			if err != nil || next == nil || *next != "later" {
				t.Errorf("next run_at %v, %v", next, err)
			}
			if next, err := r.NextRunAt(ctx, now+1); err != nil || next != nil {
				t.Errorf("next run_at after the last: %v, %v", next, err)
			}
			p, _ := r.Prefix(ctx, 3)
			if len(p) != 3 || p[2].ID != "c" {
				t.Errorf("prefix %v", p)
			}
			if p, _ := r.Prefix(ctx, 0); p != nil {
				t.Errorf("empty prefix %#v, want nil", p)
			}
			cands, err := r.V2Candidates(ctx, now, 2)
			if err != nil || !equal(ids(cands), []string{"a", "c"}) {
				t.Errorf("v2 candidates %v, %v", ids(cands), err)
			}
			if cands, _ := r.V2Candidates(ctx, now, -1); !equal(ids(cands), []string{"a", "c", "f"}) {
				t.Errorf("v2 candidates without limit %v", ids(cands))
			}
		})
	}
	// Round trip of every column, NULLs included.
	full := entry("full", "K", "assigned")
	full.TaskID, full.WorkflowID, full.AssignedAt, full.HeldAt = ptr("T"), ptr("wf"), ptr("2026-01-01T00:00:00Z"), ptr("h")
	full.RunAt, full.RunAtNS, full.ExpireAfterSecs, full.ExpireAtNS = ptr("r"), ptr(int64(-5)), ptr("18446744073709551615"), ptr(int64(9))
	full.LeaseExpiresNS, full.AssignedAtNS, full.Dispatch = ptr(int64(7)), ptr(int64(8)), []byte(`{"b":1,"a":"é\u0000"}`)
	full.QualifiedID, full.SubjectGeneration, full.WorkflowGeneration = ptr("task:T"), ptr(int64(3)), ptr(int64(4))
	full.LeaseOwner, full.LeaseGeneration, full.LeaseExpiresAt = ptr("o"), 5, ptr("x")
	full.RepoURL, full.RepoBaseRef, full.RepoHeadRef, full.RepoCollisionKey = ptr("u"), ptr("b"), ptr("h"), ptr("k")
	update(t, st, func(tx storage.Store) error { return tx.Insert(ctx, full) })
	view(t, st, func(r storage.Store) {
		got, err := r.Get(ctx, "full")
		if err != nil || fmt.Sprintf("%+v", deref(got)) != fmt.Sprintf("%+v", deref(full)) {
			t.Errorf("round trip\n got %+v\nwant %+v (%v)", deref(got), deref(full), err)
		}
		bare, _ := r.Get(ctx, "a")
		if bare.TaskID != nil || bare.RunAtNS != nil || bare.SubjectGeneration != nil || bare.ExpireAfterSecs != nil {
			t.Errorf("NULLs not scanned as nil: %+v", bare)
		}
		if e, err := r.Get(ctx, "nope"); e != nil || err != nil {
			t.Errorf("missing entry: %v %v", e, err)
		}
	})
	var root string
	if err := st.db.Tx(ctx, pgkit.ReadOnly, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT project_root FROM entries WHERE entry_id = 'a'`).Scan(&root)
	}); err != nil || root != "/work/proj" {
		t.Errorf("project_root %q, %v", root, err)
	}
}

// deref renders an entry's pointers as values, for comparison.
func deref(e *storage.Entry) string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	for _, v := range []any{e.ID, e.Ordinal, e.State, e.SubjectKey, e.TaskID, e.WorkflowRef, e.WorkflowID, e.EnqueuedAt,
		e.AssignedAt, e.HeldAt, e.RunAt, e.RunAtNS, e.ExpireAfterSecs, e.ExpireAtNS, e.LeaseExpiresNS, string(e.Dispatch),
		e.AssignedAtNS, e.QualifiedID, e.SubjectGeneration, e.WorkflowGeneration, e.LeaseOwner, e.LeaseGeneration,
		e.LeaseExpiresAt, e.RepoURL, e.RepoBaseRef, e.RepoHeadRef, e.RepoCollisionKey} {
		switch p := v.(type) {
		case *string:
			if p == nil {
				b.WriteString("nil|")
				continue
			}
			v = "s:" + *p
		case *int64:
			if p == nil {
				b.WriteString("nil|")
				continue
			}
			v = *p
		}
		fmt.Fprintf(&b, "%v|", v)
	}
	return b.String()
}

func TestSweepAndAudit(t *testing.T) {
	st := openT(t)
	ctx := context.Background()
	old, due, never, held := entry("old", "O", "pending"), entry("due", "D", "pending"), entry("never", "N", "pending"), entry("held", "H", "held")
	old.ExpireAtNS, due.ExpireAtNS, held.ExpireAtNS = ptr(int64(99)), ptr(int64(100)), ptr(int64(1))
	tick := entry("tick", "T", "pending")
	tick.ExpireAtNS, tick.QualifiedID, tick.SubjectGeneration, tick.LeaseGeneration = ptr(int64(50)), ptr("task:T"), ptr(int64(2)), 1
	update(t, st, func(tx storage.Store) error {
		for _, e := range []*storage.Entry{old, due, never, held, tick} {
			if err := tx.Insert(ctx, e); err != nil {
				return err
			}
		}
		n, err := tx.SweepExpired(ctx, 100, "T100", "queue/lease")
		if n != 2 {
			t.Errorf("swept %d, want 2 (strictly before now, pending only)", n)
		}
		if err != nil {
			return err
		}
		n, err = tx.SweepExpired(ctx, 100, "T100", "queue/lease")
		if n != 0 {
			t.Errorf("second sweep %d", n)
		}
		return err
	})
	view(t, st, func(r storage.Store) {
		for _, id := range []string{"old", "tick"} {
			if e, _ := r.Get(ctx, id); e != nil {
				t.Errorf("expired entry %s still there", id)
			}
		}
		for _, id := range []string{"due", "never", "held"} {
			if e, _ := r.Get(ctx, id); e == nil {
				t.Errorf("%s was swept", id)
			}
		}
		trail, err := r.AuditTrail(ctx, "", 10)
		// Expiry order: tick (50) before old (99).
		if err != nil || len(trail) != 2 || trail[0].EntryID != "tick" || trail[1].EntryID != "old" || trail[1].To != "expired" ||
			*trail[1].From != "pending" || trail[1].Method != "queue/lease" || trail[1].AtNS != 100 || trail[1].At != "T100" ||
			trail[1].WorkflowID != nil || *trail[1].Reason != "expire_after_secs elapsed after run_at" {
			t.Errorf("audit %+v, %v", trail, err)
		}
		f, err := r.GetFinished(ctx, "tick")
		if err != nil || f == nil || f.Outcome != "dropped" || f.FinishedBy != "expiry-sweep" || *f.SubjectGeneration != 2 {
			t.Errorf("finished %+v, %v", f, err)
		}
		if f, _ := r.GetFinished(ctx, "old"); f != nil {
			t.Errorf("old-style entry kept as finished: %+v", f)
		}
		if c, _ := r.Counts(ctx, 0); c != (storage.Counts{Pending: 2, Held: 1}) {
			t.Errorf("counts after the sweep %+v", c)
		}
	})
	update(t, st, func(tx storage.Store) error {
		for i, id := range []string{"due", "gone1", "gone2"} {
			if err := tx.Record(ctx, storage.Audit{EntryID: id, SubjectKey: "k", At: "t", AtNS: int64(i), Method: "m", To: "pending"}); err != nil {
				return err
			}
		}
		return tx.PruneAudit(ctx, 2, 10) // rows at 0 ("due", live) and 1 ("gone1") are old
	})
	view(t, st, func(r storage.Store) {
		trail, _ := r.AuditTrail(ctx, "", 10)
		var got []string
		for _, a := range trail {
			got = append(got, a.EntryID)
		}
		if !equal(got, []string{"tick", "old", "due", "gone2"}) {
			t.Errorf("after prune: %v", got)
		}
		last, _ := r.AuditTrail(ctx, "", 2)
		if len(last) != 2 || last[0].EntryID != "due" || last[1].EntryID != "gone2" || last[0].Seq >= last[1].Seq {
			t.Errorf("newest two, oldest first: %+v", last)
		}
		one, _ := r.AuditTrail(ctx, "gone2", 10)
		if len(one) != 1 || one[0].From != nil || one[0].Reason != nil {
			t.Errorf("per-entry trail: %+v", one)
		}
		if none, err := r.AuditTrail(ctx, "nobody", 10); none != nil || err != nil {
			t.Errorf("empty trail %#v, %v", none, err)
		}
	})
	// A bounded prune removes at most limit rows, oldest first.
	update(t, st, func(tx storage.Store) error {
		for i := range 5 {
			if err := tx.Record(ctx, storage.Audit{EntryID: fmt.Sprint("x", i), SubjectKey: "k", At: "t", AtNS: int64(200 + i), Method: "m", To: "pending"}); err != nil {
				return err
			}
		}
		return tx.PruneAudit(ctx, 1000, 2)
	})
	view(t, st, func(r storage.Store) {
		if trail, _ := r.AuditTrail(ctx, "", 100); len(trail) != 7 {
			t.Errorf("bounded prune left %d rows, want 7", len(trail))
		}
	})
}

func TestTicketsAndFinish(t *testing.T) {
	st := openT(t)
	ctx := context.Background()
	update(t, st, func(tx storage.Store) error {
		// An old-style entry of task:T, one without identity, a live ticket.
		legacy, anon, tick := entry("legacy", "T", "pending"), entry("anon", "T", "held"), entry("tick", "T", "assigned")
		legacy.QualifiedID = ptr("task:T")
		tick.QualifiedID, tick.SubjectGeneration, tick.LeaseGeneration = ptr("task:T"), ptr(int64(1)), 1
		tick.RepoCollisionKey, tick.AssignedAtNS, tick.LeaseOwner = ptr("repo"), ptr(int64(10)), ptr("d")
		early := entry("early", "U", "assigned") // assigned_at_ns NULL sorts first, as in SQLite
		early.QualifiedID, early.SubjectGeneration, early.RepoCollisionKey = ptr("task:U"), ptr(int64(1)), ptr("repo")
		for _, e := range []*storage.Entry{legacy, anon, tick, early} {
			if err := tx.Insert(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, st, func(tx storage.Store) error {
		old, err := tx.OldStyleOf(ctx, "task:T")
		if err != nil || !equal(ids(old), []string{"legacy", "anon"}) {
			t.Errorf("old-style of task:T %v, %v", ids(old), err)
		}
		live, err := tx.LiveTicketed(ctx, "task:T")
		if err != nil || live == nil || live.ID != "tick" {
			t.Errorf("live ticketed %v, %v", live, err)
		}
		if live, _ := tx.LiveTicketed(ctx, "task:none"); live != nil {
			t.Errorf("live ticketed of nothing: %v", live)
		}
		c, err := tx.AssignedCollision(ctx, "repo")
		if err != nil || c == nil || c.ID != "early" {
			t.Errorf("collision %v, %v", c, err)
		}
		// One above both the counter and the live generation, recorded.
		for _, want := range []int64{2, 3} {
			if g, err := tx.NextGeneration(ctx, "task:T"); err != nil || g != want {
				t.Errorf("next generation %d, %v; want %d", g, err, want)
			}
		}
		if err := tx.SetIdentity(ctx, "legacy", "task:T", 7); err != nil {
			return err
		}
		if g, _ := tx.NextGeneration(ctx, "task:T"); g != 8 {
			t.Errorf("next generation above a live 7: %d", g)
		}
		if err := tx.Bind(ctx, "k1", "tick", "h", "at"); err != nil {
			return err
		}
		if err := tx.Finish(ctx, "tick", "completed", "T1", "queue/v2/completion"); err != nil {
			return err
		}
		return tx.Finish(ctx, "anon", "dropped", "T1", "queue/drop")
	})
	view(t, st, func(r storage.Store) {
		b, err := r.GetBinding(ctx, "k1")
		if err != nil || b == nil || *b != (storage.Binding{EntryID: "tick", RequestHash: "h"}) {
			t.Errorf("binding %+v, %v", b, err)
		}
		if b, _ := r.GetBinding(ctx, "k2"); b != nil {
			t.Errorf("unbound key %+v", b)
		}
		f, err := r.GetFinished(ctx, "tick")
		if err != nil || f == nil || f.Outcome != "completed" || f.FinishedBy != "queue/v2/completion" || *f.QualifiedID != "task:T" ||
			*f.LeaseOwner != "d" || f.LeaseGeneration != 1 || f.WorkflowID != nil || f.RepoURL != nil || f.RepoCollisionKey != nil {
			t.Errorf("finished %+v, %v", f, err)
		}
		for _, id := range []string{"tick", "anon"} {
			if e, _ := r.Get(ctx, id); e != nil {
				t.Errorf("finished %s still live", id)
			}
		}
		if f, _ := r.GetFinished(ctx, "anon"); f != nil {
			t.Errorf("old-style entry kept as finished: %+v", f)
		}
	})
	if err := st.Update(ctx, func(tx storage.Store) error {
		if err := tx.Bind(ctx, "k1", "x", "h", "at"); err == nil {
			t.Error("a key was bound twice")
		}
		return nil
	}); err == nil {
		t.Error("the failed statement did not abort the transaction")
	}
}

// Two Stores on one schema, in two goroutines, never lease one entry
// twice: every read-modify-write holds the namespace lock.
func TestTwoStoresNeverLeaseTheSameEntry(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	a, b := openSchema(t, dsn, schema, 5*time.Second), openSchema(t, dsn, schema, 5*time.Second)
	ctx := context.Background()
	const n = 60
	update(t, a, func(tx storage.Store) error {
		for i := range n {
			e := entry(fmt.Sprint("e", i), fmt.Sprint("K", i), "pending")
			if i%2 == 1 {
				e.QualifiedID, e.SubjectGeneration = ptr(fmt.Sprint("task:", i)), ptr(int64(1))
			}
			if err := tx.Insert(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	var mu sync.Mutex
	leased := map[string]int{}
	var wg sync.WaitGroup
	for w, st := range []*Store{a, b, a, b} {
		wg.Go(func() {
			for {
				var got []*storage.Entry
				err := st.Update(ctx, func(tx storage.Store) error {
					got = got[:0]
					var err error
					if w%2 == 0 {
						got, err = tx.V2Candidates(ctx, 0, 2)
					} else {
						err = tx.Leasable(ctx, 0, nil, func(e *storage.Entry) bool { got = append(got, e); return len(got) < 2 })
					}
					if err != nil {
						return err
					}
					for _, e := range got {
						e.State, e.LeaseOwner = "assigned", ptr(fmt.Sprint("w", w))
						if err := tx.Save(ctx, e); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, e := range got {
					leased[e.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(leased) != n {
		t.Errorf("%d entries leased, want %d", len(leased), n)
	}
	for id, k := range leased {
		if k != 1 {
			t.Errorf("%s leased %d times", id, k)
		}
	}
	view(t, b, func(r storage.Store) {
		if c, _ := r.Counts(ctx, 0); c != (storage.Counts{Assigned: n}) {
			t.Errorf("counts %+v", c)
		}
	})
}

// Outside Update and View every statement is its own transaction.
func TestUnboundStatements(t *testing.T) {
	st := openT(t)
	ctx := context.Background()
	if err := st.Insert(ctx, entry("a", "A", "pending")); err != nil {
		t.Fatal(err)
	}
	if e, err := st.Get(ctx, "a"); err != nil || e == nil || e.Ordinal != 1 {
		t.Errorf("get %+v, %v", e, err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Error(err)
	}
}
