package sqlitestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

func addLabel(l string) func(*model.Subject) (storage.Change, error) {
	return func(old *model.Subject) (storage.Change, error) {
		p := model.Patch{LabelsAdd: []string{l}}
		return storage.Change{New: p.Apply(old, nil, time.Now().UTC())}, nil
	}
}

// Two stores on one file (two pools, as two processes would have), each
// with 100 concurrent read-modify-write label additions on one subject:
// no addition may be lost, and each is one change-log row.
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	path := tempDB(t)
	a, b := openStore(t, path, nil), openStore(t, path, nil)
	sub := newSubject(t, a, "task", nil)
	var wg sync.WaitGroup
	for i, s := range []*Store{a, b} {
		for j := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Update(context.Background(), nativeID(sub), nil, addLabel(fmt.Sprintf("p%d-%d", i, j))); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	got, err := b.Get(context.Background(), nativeID(sub))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Labels) != 200 {
		t.Fatalf("%d labels after 200 concurrent additions", len(got.Labels))
	}
	var indexed, events int
	a.db.QueryRow(`SELECT COUNT(*) FROM subject_labels`).Scan(&indexed)
	a.db.QueryRow(`SELECT COUNT(*) FROM subject_events`).Scan(&events)
	if indexed != 200 || events != 201 {
		t.Fatalf("subject_labels rows %d (want 200), events %d (want 201)", indexed, events)
	}
}

func TestUpdateScopeAndRollback(t *testing.T) {
	s := openStore(t, tempDB(t), nil)
	ctx := context.Background()
	sub := newSubject(t, s, "task", nil)
	hidden := func(*model.Subject) bool { return false }
	if _, err := s.Update(ctx, nativeID(sub), hidden, addLabel("x")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("out-of-scope update: %v", err)
	}
	if _, err := s.Update(ctx, "01NOPE", nil, addLabel("x")); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing subject: %v", err)
	}
	boom := errors.New("boom")
	if _, err := s.Update(ctx, nativeID(sub), nil, func(*model.Subject) (storage.Change, error) { return storage.Change{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("fn error: %v", err)
	}
	last, _ := s.LastEventSeq(ctx)
	if last != 1 {
		t.Fatalf("failed updates wrote events: last seq %d", last)
	}
}

func TestDeleteCascadesAndLogs(t *testing.T) {
	s := openStore(t, tempDB(t), nil)
	ctx := context.Background()
	sub := newSubject(t, s, "task", func(x *model.Subject) { x.Labels = []string{"a", "b"} })
	note := "first note"
	if _, err := s.Update(ctx, nativeID(sub), nil, func(old *model.Subject) (storage.Change, error) {
		return storage.Change{New: old.Clone(), Comment: &note}, nil
	}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Comments(ctx, sub.Seq)
	if err != nil || len(cs) != 1 || cs[0].Body != note {
		t.Fatalf("comments %+v %v", cs, err)
	}
	if _, err := s.Delete(ctx, nativeID(sub), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, nativeID(sub)); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	var labels, comments int
	s.db.QueryRow(`SELECT COUNT(*) FROM subject_labels`).Scan(&labels)
	s.db.QueryRow(`SELECT COUNT(*) FROM subject_comments`).Scan(&comments)
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
	if _, err := s.Delete(ctx, nativeID(sub), nil); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestEventRetention(t *testing.T) {
	s := openStore(t, tempDB(t), nil)
	ctx := context.Background()
	sub := newSubject(t, s, "task", nil)
	// Pretend the log is already long: pruning keeps the newest entries.
	if _, err := s.db.Exec(`UPDATE sqlite_sequence SET seq = ? WHERE name = 'subject_events'`, 40*256-2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, nativeID(sub), nil, addLabel("x")); err != nil { // seq 40*256-1
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, nativeID(sub), nil, addLabel("y")); err != nil { // seq 40*256: prunes seq <= 40*256-retention
		t.Fatal(err)
	}
	var n int
	s.db.QueryRow(`SELECT COUNT(*) FROM subject_events`).Scan(&n)
	if n != 2 {
		t.Fatalf("%d events kept; the created event (seq 1) should have been pruned", n)
	}
}
