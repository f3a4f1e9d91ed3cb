package storagetest

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// totalsStayExact drives two stores on one database (as two processes)
// through random creates, updates that move subjects into and out of
// every kind of filter, deletes and failed updates, and after each step
// holds every cached total to the truth: model.Filter.Match over all
// subjects. A store brings its cached totals forward across its own
// writes without counting (storage.Totals) and must count again when the
// other wrote, so both paths, and their mix, are checked step by step.
func totalsStayExact(t *testing.T, newDB NewDB) {
	lab := "code-review"
	hints := model.Hints{
		{NativeStatus: "In Review", MapsTo: model.InProgress, DispatchLabel: &lab},
		{NativeStatus: "Todo", MapsTo: model.Ready},
	}
	db := newDB(t, hints)
	stores := []storage.Store{db.Open(t), db.Open(t)}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	since := base.Add(30 * time.Minute)
	alice, review, doc := "alice", "In Review", "document"
	filters := []model.Filter{
		{},
		{Status: []model.Status{model.Ready}},
		{Status: []model.Status{model.Ready}, LabelsAny: []string{"a", "b"}},
		{LabelsAll: []string{"a", "b", "a"}},
		{Kind: []string{"issue"}, ScopeKinds: []string{"issue", "task"}},
		{Assignee: []string{alice}},
		{NativeStatus: &review},
		{DispatchLabel: &lab},
		{HasAttachmentKind: &doc},
		{UpdatedSince: &since, Status: []model.Status{model.Ready, model.Blocked}},
	}
	randomize := func(s *model.Subject) {
		s.Status = model.Statuses[rng.IntN(len(model.Statuses))]
		s.Labels = nil
		for _, l := range []string{"a", "b", "c"} {
			if rng.IntN(2) == 0 {
				s.Labels = append(s.Labels, l)
			}
		}
		s.Assignee, s.NativeStatus, s.Attachments = nil, nil, nil
		if rng.IntN(2) == 0 {
			s.Assignee = &alice
		}
		if natives := []string{review, "Todo"}; rng.IntN(2) == 0 {
			s.NativeStatus = &natives[rng.IntN(2)]
		}
		if rng.IntN(3) == 0 {
			s.Attachments = []model.Attachment{{ID: "1", Kind: []string{doc, "url"}[rng.IntN(2)], URI: "u"}}
		}
		s.UpdatedAt = model.Time{Time: base.Add(time.Duration(rng.IntN(60)) * time.Minute)}
	}
	var live []*model.Subject
	for step := range 160 {
		s := stores[rng.IntN(2)]
		op := rng.IntN(10)
		switch {
		case op < 4 || len(live) == 0:
			live = append(live, NewSubject(t, s, []string{"task", "issue"}[rng.IntN(2)], randomize))
		case op < 8:
			i := rng.IntN(len(live))
			n, err := s.Update(ctx, NativeID(live[i]), nil, func(old *model.Subject) (storage.Change, error) {
				n := old.Clone()
				randomize(n)
				return storage.Change{New: n}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			live[i] = n
		case op == 8:
			i := rng.IntN(len(live))
			if _, err := s.Delete(ctx, NativeID(live[i]), nil); err != nil {
				t.Fatal(err)
			}
			live = append(live[:i], live[i+1:]...)
		default: // a failed update changes nothing and logs nothing
			boom := errors.New("boom")
			_, err := s.Update(ctx, NativeID(live[rng.IntN(len(live))]), nil, func(*model.Subject) (storage.Change, error) {
				return storage.Change{}, boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("failed update: %v", err)
			}
		}
		for i, f := range filters {
			want := 0
			for _, sub := range live {
				if f.Match(sub, hints) {
					want++
				}
			}
			for j, st := range stores {
				p, err := st.List(ctx, storage.Query{Filter: f, Limit: 1})
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != int64(want) {
					t.Fatalf("step %d, store %d, filter %d %+v: total %d, want %d", step, j, i, f, p.Total, want)
				}
			}
		}
	}
}
