package storagetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// DB is one fresh, empty database of the backend under test.
type DB struct {
	// Open returns another handle on the database, as another process (or
	// host) would have; it is closed at the test's cleanup.
	Open func(t *testing.T) storage.Store
	// Count is the number of rows in a table (subject_labels,
	// subject_events, subject_comments), read behind the Store's back.
	Count func(t *testing.T, table string) int
}

// NewDB makes a fresh database whose stores use hints.
type NewDB func(t *testing.T, hints model.Hints) DB

// Run runs every backend-neutral store test against the backend newDB
// makes: what a storage.Store must do, written once for both.
func Run(t *testing.T, newDB NewDB) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, NewDB)
	}{
		{"SQLFilterAgreesWithMatch", sqlFilterAgreesWithMatch},
		{"ListByteBoundEndsPageEarly", listByteBoundEndsPageEarly},
		{"NextOrder", nextOrder},
		{"ChildrenComputed", childrenComputed},
		{"TotalFollowsOtherWriters", totalFollowsOtherWriters},
		{"TotalsStayExact", totalsStayExact},
		{"ConcurrentUpdatesLoseNothing", concurrentUpdatesLoseNothing},
		{"UpdateScopeAndRollback", updateScopeAndRollback},
		{"DeleteCascadesAndLogs", deleteCascadesAndLogs},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newDB) })
	}
}

// NewSubject inserts a subject built by fill.
func NewSubject(t *testing.T, s storage.Store, kind string, fill func(*model.Subject)) *model.Subject {
	t.Helper()
	native := ulid.Make().String()
	now := time.Now().UTC()
	sub := &model.Subject{ID: kind + ":" + native, Kind: kind, Title: "t " + native, Status: model.Ready,
		CreatedAt: model.Time{Time: now}, UpdatedAt: model.Time{Time: now}}
	if fill != nil {
		fill(sub)
	}
	out, err := s.Create(context.Background(), sub, native)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// NativeID is the native part of a subject id.
func NativeID(s *model.Subject) string { _, n, _ := strings.Cut(s.ID, ":"); return n }

// AddLabel is an update adding label l.
func AddLabel(l string) func(*model.Subject) (storage.Change, error) {
	return func(old *model.Subject) (storage.Change, error) {
		p := model.Patch{LabelsAdd: []string{l}}
		return storage.Change{New: p.Apply(old, nil, time.Now().UTC())}, nil
	}
}

// The SQL WHERE clause and model.Filter.Match must agree on every filter:
// lists use the first, watches the second. Random subjects, random
// filters, same answers; and paging through any filter in small pages
// yields exactly the full result, in order, with no short pages.
func sqlFilterAgreesWithMatch(t *testing.T, newDB NewDB) {
	lab, qa := "code-review", "qa"
	hints := model.Hints{
		{NativeStatus: "In Review", MapsTo: model.InProgress, DispatchLabel: &lab},
		{NativeStatus: "Testing", MapsTo: model.InProgress, DispatchLabel: &qa},
		{NativeStatus: "Todo", MapsTo: model.Ready},
	}
	s := newDB(t, hints).Open(t)
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []string{"task", "issue"}
	labels := []string{"a", "b", "c", "d"}
	people := []string{"alice", "bob"}
	natives := []string{"In Review", "Testing", "Todo", "Other"}
	attKinds := []string{"document", "url"}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []*model.Subject
	for i := range 240 {
		all = append(all, NewSubject(t, s, kinds[rng.IntN(2)], func(sub *model.Subject) {
			sub.Status = model.Statuses[rng.IntN(5)]
			if rng.IntN(3) > 0 {
				sub.Assignee = &people[rng.IntN(2)]
			}
			for _, l := range labels {
				if rng.IntN(3) == 0 {
					sub.Labels = append(sub.Labels, l)
				}
			}
			if rng.IntN(2) == 0 {
				sub.NativeStatus = &natives[rng.IntN(4)]
			}
			for j := range rng.IntN(3) {
				sub.Attachments = append(sub.Attachments, model.Attachment{ID: fmt.Sprint(j), Kind: attKinds[rng.IntN(2)], URI: "u"})
			}
			sub.UpdatedAt = model.Time{Time: base.Add(time.Duration(i) * time.Minute)}
		}))
	}
	pick := func(from []string) []string {
		var out []string
		for _, v := range from {
			if rng.IntN(3) == 0 {
				out = append(out, v)
			}
		}
		return out
	}
	nonEmpty := 0
	defer func() {
		if nonEmpty < 30 {
			t.Errorf("only %d of 150 random filters matched anything; the test proves little", nonEmpty)
		}
	}()
	for i := range 150 {
		var f model.Filter
		f.Kind = pick(kinds)
		for _, st := range model.Statuses {
			if rng.IntN(4) == 0 {
				f.Status = append(f.Status, st)
			}
		}
		f.Assignee = pick(people)
		f.LabelsAny = pick(labels)
		if rng.IntN(2) == 0 {
			f.LabelsAll = pick(labels)
		}
		if rng.IntN(4) == 0 {
			since := base.Add(time.Duration(rng.IntN(240)) * time.Minute)
			f.UpdatedSince = &since
		}
		if rng.IntN(4) == 0 {
			f.NativeStatus = &natives[rng.IntN(4)]
		}
		if rng.IntN(4) == 0 {
			l := []string{lab, qa, "none"}[rng.IntN(3)]
			f.DispatchLabel = &l
		}
		if rng.IntN(4) == 0 {
			f.HasAttachmentKind = &attKinds[rng.IntN(2)]
		}
		var want []string
		for _, sub := range all {
			if f.Match(sub, hints) {
				want = append(want, sub.ID)
			}
		}
		if len(want) > 0 {
			nonEmpty++
		}
		var got []string
		var after int64
		for pages := 0; ; pages++ {
			p, err := s.List(context.Background(), storage.Query{Filter: f, After: after, Limit: 7})
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != int64(len(want)) {
				t.Fatalf("filter %d %+v: total %d, Match finds %d", i, f, p.Total, len(want))
			}
			if p.More && len(p.Subjects) != 7 {
				t.Fatalf("filter %d: short page of %d with more to come", i, len(p.Subjects))
			}
			for _, sub := range p.Subjects {
				got = append(got, sub.ID)
			}
			if !p.More {
				break
			}
			after = p.Subjects[len(p.Subjects)-1].Seq
		}
		if !slices.Equal(got, want) {
			t.Fatalf("filter %d %+v:\n SQL   %v\n Match %v", i, f, got, want)
		}
	}
}

func listByteBoundEndsPageEarly(t *testing.T, newDB NewDB) {
	db := newDB(t, nil)
	s := db.Open(t)
	big := strings.Repeat("x", 10_000)
	for range 5 {
		NewSubject(t, s, "task", func(sub *model.Subject) { sub.Description = &big })
	}
	p, err := s.List(context.Background(), storage.Query{Limit: 100, MaxBytes: 25_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Subjects) != 3 || !p.More || p.Total != 5 {
		t.Fatalf("got %d subjects more=%v total=%d; want 3 (the page stops once past 25 kB)", len(p.Subjects), p.More, p.Total)
	}
}

func nextOrder(t *testing.T, newDB NewDB) {
	db := newDB(t, nil)
	s := db.Open(t)
	ctx := context.Background()
	if n, err := s.Next(ctx, []string{"task"}); n != nil || err != nil {
		t.Fatalf("empty store: %v %v", n, err)
	}
	p := func(n int) *int { return &n }
	NewSubject(t, s, "task", nil) // no priority: last
	low := NewSubject(t, s, "task", func(x *model.Subject) { x.Priority = p(1) })
	NewSubject(t, s, "task", func(x *model.Subject) { x.Priority = p(4); x.Status = model.Blocked })
	high1 := NewSubject(t, s, "task", func(x *model.Subject) { x.Priority = p(3) })
	NewSubject(t, s, "task", func(x *model.Subject) { x.Priority = p(3) })
	NewSubject(t, s, "issue", func(x *model.Subject) { x.Priority = p(4) })
	n, err := s.Next(ctx, []string{"task"})
	if err != nil || n.ID != high1.ID {
		t.Fatalf("next = %v (%v), want the oldest priority-3 ready task %s", n, err, high1.ID)
	}
	if _, err := s.Delete(ctx, NativeID(high1), nil); err != nil {
		t.Fatal(err)
	}
	n, _ = s.Next(ctx, []string{"task"})
	if n.ID == low.ID || *n.Priority != 3 {
		t.Fatalf("after delete next = %s", n.ID)
	}
}

func childrenComputed(t *testing.T, newDB NewDB) {
	db := newDB(t, nil)
	s := db.Open(t)
	parent := NewSubject(t, s, "task", nil)
	c1 := NewSubject(t, s, "task", func(x *model.Subject) { x.Parent = &parent.ID })
	c2 := NewSubject(t, s, "issue", func(x *model.Subject) { x.Parent = &parent.ID })
	got, err := s.Get(context.Background(), NativeID(parent))
	if err != nil || !slices.Equal(got.Children, []string{c1.ID, c2.ID}) {
		t.Fatalf("children %v (%v)", got.Children, err)
	}
	b, _ := json.Marshal(got.Children)
	if string(b) == "null" {
		t.Fatal("children lost")
	}
}

// Totals are cached per change-log generation: a write by another process
// (another store on the file) is seen by the next list's total.
func totalFollowsOtherWriters(t *testing.T, newDB NewDB) {
	db := newDB(t, nil)
	a, b := db.Open(t), db.Open(t)
	ctx := context.Background()
	f := model.Filter{Status: []model.Status{model.Ready}}
	total := func() int64 {
		t.Helper()
		p, err := a.List(ctx, storage.Query{Filter: f, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		return p.Total
	}
	NewSubject(t, a, "task", nil)
	if n := total(); n != 1 {
		t.Fatalf("total %d", n)
	}
	x := NewSubject(t, b, "task", nil)
	NewSubject(t, b, "task", func(s *model.Subject) { s.Status = model.Done })
	if n := total(); n != 2 {
		t.Fatalf("total %d after another writer added one match", n)
	}
	if _, err := b.Delete(ctx, NativeID(x), nil); err != nil {
		t.Fatal(err)
	}
	if n := total(); n != 1 {
		t.Fatalf("total %d after another writer deleted one", n)
	}
}

// Two stores on one file (two pools, as two processes would have), each
// with 100 concurrent read-modify-write label additions on one subject:
// no addition may be lost, and each is one change-log row.
func concurrentUpdatesLoseNothing(t *testing.T, newDB NewDB) {
	db := newDB(t, nil)
	a, b := db.Open(t), db.Open(t)
	sub := NewSubject(t, a, "task", nil)
	var wg sync.WaitGroup
	for i, s := range []storage.Store{a, b} {
		for j := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Update(context.Background(), NativeID(sub), nil, AddLabel(fmt.Sprintf("p%d-%d", i, j))); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	got, err := b.Get(context.Background(), NativeID(sub))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Labels) != 200 {
		t.Fatalf("%d labels after 200 concurrent additions", len(got.Labels))
	}
	indexed, events := db.Count(t, "subject_labels"), db.Count(t, "subject_events")
	if indexed != 200 || events != 201 {
		t.Fatalf("subject_labels rows %d (want 200), events %d (want 201)", indexed, events)
	}
}

func updateScopeAndRollback(t *testing.T, newDB NewDB) {
	db := newDB(t, nil)
	s := db.Open(t)
	ctx := context.Background()
	sub := NewSubject(t, s, "task", nil)
	hidden := func(*model.Subject) bool { return false }
	if _, err := s.Update(ctx, NativeID(sub), hidden, AddLabel("x")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("out-of-scope update: %v", err)
	}
	if _, err := s.Update(ctx, "01NOPE", nil, AddLabel("x")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing subject: %v", err)
	}
	boom := errors.New("boom")
	if _, err := s.Update(ctx, NativeID(sub), nil, func(*model.Subject) (storage.Change, error) { return storage.Change{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("fn error: %v", err)
	}
	last, _ := s.LastEventSeq(ctx)
	if last != 1 {
		t.Fatalf("failed updates wrote events: last seq %d", last)
	}
}

func deleteCascadesAndLogs(t *testing.T, newDB NewDB) {
	db := newDB(t, nil)
	s := db.Open(t)
	ctx := context.Background()
	sub := NewSubject(t, s, "task", func(x *model.Subject) { x.Labels = []string{"a", "b"} })
	note := "first note"
	if _, err := s.Update(ctx, NativeID(sub), nil, func(old *model.Subject) (storage.Change, error) {
		return storage.Change{New: old.Clone(), Comment: &note}, nil
	}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Comments(ctx, sub.Seq)
	if err != nil || len(cs) != 1 || cs[0].Body != note {
		t.Fatalf("comments %+v %v", cs, err)
	}
	if _, err := s.Delete(ctx, NativeID(sub), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, NativeID(sub)); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	labels, comments := db.Count(t, "subject_labels"), db.Count(t, "subject_comments")
	if labels != 0 || comments != 0 {
		t.Fatalf("delete left %d label rows and %d comments", labels, comments)
	}
	evs, err := s.EventsAfter(ctx, 0, 10)
	if err != nil || len(evs) != 3 {
		t.Fatalf("events %d %v", len(evs), err)
	}
	var kinds []model.ChangeKind
	for _, e := range evs {
		var ev model.Event
		if err := json.Unmarshal(e.Event, &ev); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, ev.ChangeKind)
		if ev.Subject.ID != sub.ID {
			t.Fatalf("event about %s", ev.Subject.ID)
		}
	}
	if fmt.Sprint(kinds) != "[created updated deleted]" {
		t.Fatalf("event kinds %v", kinds)
	}
	if _, err := s.Delete(ctx, NativeID(sub), nil); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}
