package sqlitestore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// The SQL WHERE clause and model.Filter.Match must agree on every filter:
// lists use the first, watches the second. Random subjects, random
// filters, same answers; and paging through any filter in small pages
// yields exactly the full result, in order, with no short pages.
func TestSQLFilterAgreesWithMatch(t *testing.T) {
	lab, qa := "code-review", "qa"
	hints := model.Hints{
		{NativeStatus: "In Review", MapsTo: model.InProgress, DispatchLabel: &lab},
		{NativeStatus: "Testing", MapsTo: model.InProgress, DispatchLabel: &qa},
		{NativeStatus: "Todo", MapsTo: model.Ready},
	}
	s := openStore(t, tempDB(t), hints)
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []string{"task", "issue"}
	labels := []string{"a", "b", "c", "d"}
	people := []string{"alice", "bob"}
	natives := []string{"In Review", "Testing", "Todo", "Other"}
	attKinds := []string{"document", "url"}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []*model.Subject
	for i := range 240 {
		all = append(all, newSubject(t, s, kinds[rng.IntN(2)], func(sub *model.Subject) {
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

func TestListByteBoundEndsPageEarly(t *testing.T) {
	s := openStore(t, tempDB(t), nil)
	big := strings.Repeat("x", 10_000)
	for range 5 {
		newSubject(t, s, "task", func(sub *model.Subject) { sub.Description = &big })
	}
	p, err := s.List(context.Background(), storage.Query{Limit: 100, MaxBytes: 25_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Subjects) != 3 || !p.More || p.Total != 5 {
		t.Fatalf("got %d subjects more=%v total=%d; want 3 (the page stops once past 25 kB)", len(p.Subjects), p.More, p.Total)
	}
}

func TestNextOrder(t *testing.T) {
	s := openStore(t, tempDB(t), nil)
	ctx := context.Background()
	if n, err := s.Next(ctx, []string{"task"}); n != nil || err != nil {
		t.Fatalf("empty store: %v %v", n, err)
	}
	p := func(n int) *int { return &n }
	newSubject(t, s, "task", nil) // no priority: last
	low := newSubject(t, s, "task", func(x *model.Subject) { x.Priority = p(1) })
	newSubject(t, s, "task", func(x *model.Subject) { x.Priority = p(4); x.Status = model.Blocked })
	high1 := newSubject(t, s, "task", func(x *model.Subject) { x.Priority = p(3) })
	newSubject(t, s, "task", func(x *model.Subject) { x.Priority = p(3) })
	newSubject(t, s, "issue", func(x *model.Subject) { x.Priority = p(4) })
	n, err := s.Next(ctx, []string{"task"})
	if err != nil || n.ID != high1.ID {
		t.Fatalf("next = %v (%v), want the oldest priority-3 ready task %s", n, err, high1.ID)
	}
	if _, err := s.Delete(ctx, nativeID(high1), nil); err != nil {
		t.Fatal(err)
	}
	n, _ = s.Next(ctx, []string{"task"})
	if n.ID == low.ID || *n.Priority != 3 {
		t.Fatalf("after delete next = %s", n.ID)
	}
}

func TestChildrenComputed(t *testing.T) {
	s := openStore(t, tempDB(t), nil)
	parent := newSubject(t, s, "task", nil)
	c1 := newSubject(t, s, "task", func(x *model.Subject) { x.Parent = &parent.ID })
	c2 := newSubject(t, s, "issue", func(x *model.Subject) { x.Parent = &parent.ID })
	got, err := s.Get(context.Background(), nativeID(parent))
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
func TestTotalFollowsOtherWriters(t *testing.T) {
	path := tempDB(t)
	a, b := openStore(t, path, nil), openStore(t, path, nil)
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
	newSubject(t, a, "task", nil)
	if n := total(); n != 1 {
		t.Fatalf("total %d", n)
	}
	x := newSubject(t, b, "task", nil)
	newSubject(t, b, "task", func(s *model.Subject) { s.Status = model.Done })
	if n := total(); n != 2 {
		t.Fatalf("total %d after another writer added one match", n)
	}
	if _, err := b.Delete(ctx, nativeID(x), nil); err != nil {
		t.Fatal(err)
	}
	if n := total(); n != 1 {
		t.Fatalf("total %d after another writer deleted one", n)
	}
}
