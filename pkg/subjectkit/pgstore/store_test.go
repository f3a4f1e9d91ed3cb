package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage/storagetest"
)

// ns is one test namespace: the cluster and a fresh schema in it.
type ns struct{ dsn, schema string }

func newNS(t *testing.T) ns {
	t.Helper()
	dsn := pgtest.DSN(t)
	return ns{dsn, pgtest.Schema(t, dsn)}
}

// open opens another Store on the namespace (closed at cleanup), as
// another process or host would; app names its sessions.
func (n ns) open(t *testing.T, o Options, app string) *Store {
	t.Helper()
	db, err := pgkit.Open(pgkit.Options{DSN: n.dsn, Schema: n.schema, AppName: app})
	if err != nil {
		t.Fatal(err)
	}
	o.DB = db
	st, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// count reads a table's row count behind the Store's back.
func (n ns) count(t *testing.T, table string) int {
	t.Helper()
	var c int
	if err := pgtest.Connect(t, n.dsn).QueryRow(context.Background(), `SELECT count(*) FROM `+n.schema+`.`+table).Scan(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestStore runs the backend-neutral store suite on PostgreSQL; every
// Open is another pool on the same namespace.
func TestStore(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, hints model.Hints) storagetest.DB {
		n := newNS(t)
		return storagetest.DB{
			Open:  func(t *testing.T) storage.Store { return n.open(t, Options{Hints: hints}, "subject-pgstore-test") },
			Count: n.count,
		}
	})
}

// Seqs are contiguous and every committed change has exactly one, also
// with four stores (four processes) writing at once; a failed write
// gives its seq back.
func TestChangeLogContiguous(t *testing.T) {
	n := newNS(t)
	ctx := context.Background()
	stores := make([]*Store, 4)
	for i := range stores {
		stores[i] = n.open(t, Options{}, "subject-pgstore-test")
	}
	sub := storagetest.NewSubject(t, stores[0], "task", nil)
	var wg sync.WaitGroup
	for i, s := range stores {
		for j := range 25 {
			wg.Go(func() {
				if _, err := s.Update(ctx, storagetest.NativeID(sub), nil, storagetest.AddLabel(fmt.Sprintf("s%d-%d", i, j))); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	boom := errors.New("boom")
	if _, err := stores[1].Update(ctx, storagetest.NativeID(sub), nil, func(*model.Subject) (storage.Change, error) { return storage.Change{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("failing update: %v", err)
	}
	storagetest.NewSubject(t, stores[2], "task", nil)
	evs, err := stores[3].EventsAfter(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 102 {
		t.Fatalf("%d events, want 102 (2 creates, 100 updates)", len(evs))
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: the log has a gap", i, e.Seq)
		}
	}
	// Each update saw the one before it: the label sets grow by one.
	for i, e := range evs[1:101] {
		var ev model.Event
		if err := json.Unmarshal(e.Event, &ev); err != nil {
			t.Fatal(err)
		}
		if len(ev.Subject.Labels) != i+1 {
			t.Fatalf("update event %d carries %d labels, want %d: not in commit order", i+1, len(ev.Subject.Labels), i+1)
		}
	}
	if last, _ := stores[0].LastEventSeq(ctx); last != 102 {
		t.Fatalf("last seq %d", last)
	}
}

func TestEventRetention(t *testing.T) {
	n := newNS(t)
	s := n.open(t, Options{}, "subject-pgstore-test")
	ctx := context.Background()
	sub := storagetest.NewSubject(t, s, "task", nil)
	// Pretend the log is already long: pruning keeps the newest entries.
	if _, err := pgtest.Connect(t, n.dsn).Exec(ctx, `UPDATE `+n.schema+`.meta SET last_event_seq = $1`, 40*256-2); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"x", "y"} { // seqs 40*256-1 and 40*256, which prunes
		if _, err := s.Update(ctx, storagetest.NativeID(sub), nil, storagetest.AddLabel(l)); err != nil {
			t.Fatal(err)
		}
	}
	if c := n.count(t, "subject_events"); c != 2 {
		t.Fatalf("%d events kept; the created event (seq 1) should have been pruned", c)
	}
}

// A writer that cannot get the namespace lock within the lock timeout
// fails as unavailable with a reason the host can show, changes nothing,
// and succeeds once the lock is free; readers never wait for it.
func TestLockTimeoutIsUnavailable(t *testing.T) {
	n := newNS(t)
	ctx := context.Background()
	s := n.open(t, Options{LockTimeout: 50 * time.Millisecond}, "subject-pgstore-test")
	sub := storagetest.NewSubject(t, s, "task", nil)
	holder := pgtest.Connect(t, n.dsn)
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, lockClass, n.schema); err != nil {
		t.Fatal(err)
	}
	_, err := s.Update(ctx, storagetest.NativeID(sub), nil, storagetest.AddLabel("blocked"))
	var ue *storage.UnavailableError
	if !errors.As(err, &ue) || ue.Reason != reasonLocked {
		t.Fatalf("update under a held lock: %v", err)
	}
	if got, err := s.Get(ctx, storagetest.NativeID(sub)); err != nil || len(got.Labels) != 0 {
		t.Fatalf("get under a held lock: %+v %v", got, err)
	}
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, lockClass, n.schema); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Update(ctx, storagetest.NativeID(sub), nil, storagetest.AddLabel("free")); err != nil || !slices.Equal(got.Labels, []string{"free"}) {
		t.Fatalf("update after release: %+v %v", got, err)
	}
}

// Follow wakes on another store's commit, and after its LISTEN session is
// terminated it listens again by itself: the reconnect wakes once (for
// what was committed meanwhile) and later commits wake it as before.
// Another namespace's commits do not wake it.
func TestFollowWakesAndReconnects(t *testing.T) {
	n := newNS(t)
	other := newNS(t)
	ctx, cancel := context.WithCancel(context.Background())
	const app = "subject-follow-test"
	follower := n.open(t, Options{Retry: 20 * time.Millisecond}, app)
	writer := n.open(t, Options{}, "subject-pgstore-test")
	elsewhere := other.open(t, Options{}, "subject-pgstore-test")
	wakes := make(chan struct{}, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		follower.Follow(ctx, func() { wakes <- struct{}{} })
	}()
	defer func() { cancel(); <-done }()
	await := func(what string) {
		t.Helper()
		select {
		case <-wakes:
		case <-time.After(10 * time.Second): // a hang detector
			t.Fatalf("no wake %s", what)
		}
	}
	drain := func() {
		for {
			select {
			case <-wakes:
			case <-time.After(200 * time.Millisecond):
				return
			}
		}
	}
	await("on listening")
	storagetest.NewSubject(t, elsewhere, "task", nil)
	storagetest.NewSubject(t, writer, "task", nil)
	await("on another process's commit")
	drain()
	storagetest.NewSubject(t, elsewhere, "task", nil)
	select {
	case <-wakes:
		t.Fatal("woken by another namespace's commit")
	case <-time.After(300 * time.Millisecond):
	}
	killed, err := pgtest.TerminateQuery(ctx, n.dsn, "LISTEN "+Channel)
	if err != nil || killed < 1 {
		t.Fatalf("terminated %d LISTEN sessions: %v", killed, err)
	}
	await("on listening again")
	drain()
	storagetest.NewSubject(t, writer, "task", nil)
	await("on a commit after the reconnect")
}

// Import copies an animus-subject-sqlite database: the same subjects
// (ids, seqs, labels, children, every field), the same comments; new rows
// continue after the imported seqs; a second import is refused with
// nothing changed.
func TestImportFromSQLite(t *testing.T) {
	ctx := context.Background()
	src, err := sqlitestore.Open(ctx, sqlitestore.Options{Path: filepath.Join(t.TempDir(), "s.db"), AutoMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	prio, who, note := 3, "alice", "a comment"
	parent := storagetest.NewSubject(t, src, "task", func(s *model.Subject) { s.Labels = []string{"a", "b"}; s.Priority = &prio })
	storagetest.NewSubject(t, src, "issue", func(s *model.Subject) {
		s.Parent, s.Assignee, s.Status = &parent.ID, &who, model.Blocked
		s.Custom = map[string]json.RawMessage{"points": json.RawMessage(`5`)}
		s.Attachments = []model.Attachment{{ID: "1", Kind: "url", URI: "https://example.com"}}
		s.StatusMetadata = json.RawMessage(`{"k":[1,2]}`)
	})
	if _, err := src.Update(ctx, storagetest.NativeID(parent), nil, func(old *model.Subject) (storage.Change, error) {
		return storage.Change{New: old.Clone(), Comment: &note}, nil
	}); err != nil {
		t.Fatal(err)
	}
	dump, err := sqlitestore.Export(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	n := newNS(t)
	dst := n.open(t, Options{}, "subject-pgstore-test")
	// A total cached on the empty namespace must not outlive the import.
	if p, err := dst.List(ctx, storage.Query{Limit: 1}); err != nil || p.Total != 0 {
		t.Fatalf("list before import: %+v %v", p, err)
	}
	if err := dst.Import(ctx, dump); err != nil {
		t.Fatal(err)
	}
	if p, err := dst.List(ctx, storage.Query{Limit: 1}); err != nil || p.Total != int64(len(dump.Subjects)) {
		t.Fatalf("total after import: %+v %v, want %d", p.Total, err, len(dump.Subjects))
	}
	list := func(s storage.Store) []byte {
		t.Helper()
		p, err := s.List(ctx, storage.Query{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p.Subjects)
		return b
	}
	if a, b := list(src), list(dst); string(a) != string(b) {
		t.Fatalf("lists differ after import:\nsqlite   %s\npostgres %s", a, b)
	}
	p, err := dst.List(ctx, storage.Query{Filter: model.Filter{LabelsAll: []string{"a", "b"}}, Limit: 10})
	if err != nil || len(p.Subjects) != 1 || p.Subjects[0].ID != parent.ID {
		t.Fatalf("label filter after import: %+v %v", p, err)
	}
	cs, err := dst.Comments(ctx, parent.Seq)
	if err != nil || len(cs) != 1 || cs[0].Body != note {
		t.Fatalf("comments after import: %+v %v", cs, err)
	}
	fresh := storagetest.NewSubject(t, dst, "task", nil)
	if fresh.Seq <= dump.Subjects[len(dump.Subjects)-1].Row.Seq {
		t.Fatalf("a new subject got seq %d, inside the imported range", fresh.Seq)
	}
	before := n.count(t, "subjects")
	if err := dst.Import(ctx, dump); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("second import: %v", err)
	}
	if after := n.count(t, "subjects"); after != before {
		t.Fatalf("a refused import changed the namespace: %d subjects, had %d", after, before)
	}
}
