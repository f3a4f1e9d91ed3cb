package sqlitestore

import (
	"context"
	"errors"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

func openT(t *testing.T, path string, busy time.Duration) *Store {
	t.Helper()
	st, err := Open(context.Background(), Options{Path: path, BusyTimeout: busy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestOpenMigratesOnceUnderConcurrentStarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "queue.sqlite")
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	stores := make(chan *Store, n)
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			st, err := Open(context.Background(), Options{Path: path, BusyTimeout: 5 * time.Second})
			if err != nil {
				errs <- err
				return
			}
			stores <- st
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	close(stores)
	for err := range errs {
		t.Errorf("concurrent open: %v", err)
	}
	for st := range stores {
		v, err := st.db.Version(context.Background())
		if err != nil || v != SchemaVersion() {
			t.Errorf("version %d, %v; want %d", v, err, SchemaVersion())
		}
		st.Close()
	}
}

// A current schema is opened without the write lock: Open succeeds while
// another connection holds it.
func TestOpenCurrentSchemaNeedsNoWriteLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.sqlite")
	holder := openT(t, path, time.Second)
	release, held := holdWriteLock(t, holder)
	defer release()
	<-held
	st, err := Open(context.Background(), Options{Path: path, BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("open beside a writer: %v", err)
	}
	st.Close()
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.sqlite")
	raw, err := sqlitex.Open(context.Background(), sqlitex.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := Open(context.Background(), Options{Path: path}); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("open of a newer schema: %v, want ErrNewerSchema", err)
	}
}

// holdWriteLock keeps a write transaction open on st until release is
// called; held is closed once the lock is taken.
func holdWriteLock(t *testing.T, st *Store) (release func(), held chan struct{}) {
	t.Helper()
	held = make(chan struct{})
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- st.Update(context.Background(), func(tx storage.Store) error {
			if _, err := tx.(*Store).q.ExecContext(context.Background(), `UPDATE entries SET ordinal = ordinal WHERE 0`); err != nil {
				return err
			}
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

func TestBusyTimeoutIsReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.sqlite")
	holder := openT(t, path, time.Second)
	other := openT(t, path, 80*time.Millisecond)
	release, held := holdWriteLock(t, holder)
	defer release()
	<-held
	start := time.Now()
	err := other.Update(context.Background(), func(tx storage.Store) error { return nil })
	if !IsBusy(err) {
		t.Fatalf("update beside a writer: %v, want busy", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("gave up after %v, before the busy timeout", d)
	}
	// Reads are not blocked by the writer (WAL).
	if err := other.View(context.Background(), func(r storage.Store) error {
		_, err := r.Counts(context.Background(), 0)
		return err
	}); err != nil {
		t.Errorf("read beside a writer: %v", err)
	}
}

func TestUpdateRollsBackOnError(t *testing.T) {
	st := openT(t, filepath.Join(t.TempDir(), "q.sqlite"), time.Second)
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
	})
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

func TestQueries(t *testing.T) {
	st := openT(t, filepath.Join(t.TempDir(), "q.sqlite"), time.Second)
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
	rows[1].AssignedAtNS = ptr(now)     // leased at the reclaim cutoff: reclaimable
	rows[6].AssignedAtNS = ptr(now + 1) // leased after it
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
	view(t, st, func(r storage.Store) {
		for _, tc := range []struct {
			reclaim *int64
			want    []string
		}{{nil, []string{"a", "c", "f"}}, {ptr(now), []string{"a", "b", "c", "f"}}} {
			var got []string
			if err := r.Leasable(ctx, now, tc.reclaim, func(e *storage.Entry) bool { got = append(got, e.ID); return true }); err != nil {
				t.Fatal(err)
			}
			if !equal(got, tc.want) {
				t.Errorf("leasable(reclaim=%v) = %v, want %v", tc.reclaim, got, tc.want)
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
			t.Errorf("list: total %d, %v", total, ids(list))
		}
		list, total, _ = r.List(ctx, []string{"bogus"}, nil, 0)
		if total != 0 || len(list) != 0 {
			t.Errorf("unknown status matched %d", total)
		}
		list, _, _ = r.List(ctx, nil, nil, 1<<63+5)
		if len(list) != 0 {
			t.Errorf("huge offset returned %v", ids(list))
		}
		if n, _ := r.CountSubject(ctx, "A"); n != 2 {
			t.Errorf("count subject A = %d", n)
		}
		next, err := r.NextRunAt(ctx, now)
		if err != nil || next == nil || *next != "later" {
			t.Errorf("next run_at %v, %v", next, err)
		}
		p, _ := r.Prefix(ctx, 3)
		if len(p) != 3 || p[2].ID != "c" {
			t.Errorf("prefix %v", p)
		}
	})
}

func TestSweepAndAudit(t *testing.T) {
	st := openT(t, filepath.Join(t.TempDir(), "q.sqlite"), time.Second)
	ctx := context.Background()
	old, due, never, held := entry("old", "O", "pending"), entry("due", "D", "pending"), entry("never", "N", "pending"), entry("held", "H", "held")
	old.ExpireAtNS, due.ExpireAtNS, held.ExpireAtNS = ptr(int64(99)), ptr(int64(100)), ptr(int64(1))
	update(t, st, func(tx storage.Store) error {
		for _, e := range []*storage.Entry{old, due, never, held} {
			if err := tx.Insert(ctx, e); err != nil {
				return err
			}
		}
		n, err := tx.SweepExpired(ctx, 100, "T100", "queue/lease")
		if n != 1 {
			t.Errorf("swept %d, want 1 (strictly before now, pending only)", n)
		}
		return err
	})
	view(t, st, func(r storage.Store) {
		if e, _ := r.Get(ctx, "old"); e != nil {
			t.Error("expired entry still there")
		}
		for _, id := range []string{"due", "never", "held"} {
			if e, _ := r.Get(ctx, id); e == nil {
				t.Errorf("%s was swept", id)
			}
		}
		trail, err := r.AuditTrail(ctx, "", 10)
		if err != nil || len(trail) != 1 || trail[0].EntryID != "old" || trail[0].To != "expired" || *trail[0].From != "pending" || trail[0].Method != "queue/lease" {
			t.Errorf("audit %+v, %v", trail, err)
		}
	})
	// Pruning keeps the history of live entries and of recent rows.
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
		// "old" was recorded at_ns 100 (recent), "due" is live, "gone2" is recent.
		if !equal(got, []string{"old", "due", "gone2"}) {
			t.Errorf("after prune: %v", got)
		}
		one, _ := r.AuditTrail(ctx, "gone2", 10)
		if len(one) != 1 {
			t.Errorf("per-entry trail: %+v", one)
		}
	})
}

func ids(es []*storage.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// §5.4 (27): every connection commits with synchronous=FULL.
func TestSynchronousFull(t *testing.T) {
	st := openT(t, filepath.Join(t.TempDir(), "q.sqlite"), time.Second)
	var mode int
	if err := st.db.QueryRowContext(context.Background(), `PRAGMA synchronous`).Scan(&mode); err != nil || mode != 2 {
		t.Errorf("synchronous = %d, %v; want 2 (FULL)", mode, err)
	}
}
