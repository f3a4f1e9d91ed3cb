package watch

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	store "github.com/animus-plugins/animus-plugins/pkg/subjectkit/sqlitestore"
)

type sent struct {
	id    string
	event model.Event
}

type recorder struct {
	mu   sync.Mutex
	got  []sent
	fail bool
}

func (r *recorder) notify(method string, p any) error {
	if method != Method {
		panic(method)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return errors.New("connection closed")
	}
	pp := p.(params)
	var ev model.Event
	if err := json.Unmarshal(pp.Event, &ev); err != nil {
		panic(err)
	}
	r.got = append(r.got, sent{string(pp.ID), ev})
	return nil
}

func (r *recorder) snapshot() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sent(nil), r.got...)
}

func (r *recorder) waitFor(t *testing.T, n int) []sent {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if got := r.snapshot(); len(got) >= n {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("only %d of %d notifications arrived", len(r.snapshot()), n)
	return nil
}

func open(t *testing.T, path string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), store.Options{Path: path, BusyTimeout: 5 * time.Second, AutoMigrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func create(t *testing.T, s *store.Store, status model.Status) *model.Subject {
	t.Helper()
	native := ulid.Make().String()
	now := model.Time{Time: time.Now().UTC()}
	sub, err := s.Create(context.Background(), &model.Subject{ID: "task:" + native, Kind: "task", Title: "t", Status: status, CreatedAt: now, UpdatedAt: now}, native)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// Writes through another store (another process, as far as the hub can
// tell: nothing nudges it) reach each watcher by polling, in commit
// order, filtered per watcher; unwatch stops delivery.
func TestHubDeliversOtherWritersInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	mine, theirs := open(t, path), open(t, path)
	create(t, theirs, model.Ready) // before any watch: never delivered
	rec := &recorder{}
	hub, ctx := runHub(t, mine, 20*time.Millisecond, rec)

	if reg, err := hub.Watch(ctx, "7", json.RawMessage(`7`), model.Filter{}); err != nil {
		t.Fatal(err)
	} else {
		reg.Arm()
	}
	if reg, err := hub.Watch(ctx, "w", json.RawMessage(`"w"`), model.Filter{Status: []model.Status{model.Blocked}}); err != nil {
		t.Fatal(err)
	} else {
		reg.Arm()
	}
	var ids []string
	for i := range 6 {
		status := model.Ready
		if i%2 == 1 {
			status = model.Blocked
		}
		ids = append(ids, create(t, theirs, status).ID)
	}
	got := rec.waitFor(t, 9)
	var all, blocked []string
	for _, s := range got {
		switch s.id {
		case "7":
			all = append(all, s.event.ID)
		case `"w"`:
			blocked = append(blocked, s.event.ID)
			if s.event.Subject.Status != model.Blocked {
				t.Errorf("the blocked-only watcher got a %s subject", s.event.Subject.Status)
			}
		default:
			t.Errorf("notification for unknown watch id %s", s.id)
		}
	}
	if len(all) != 6 || len(blocked) != 3 {
		t.Fatalf("all-watcher got %d, blocked-watcher %d", len(all), len(blocked))
	}
	for i := range all {
		if all[i] != ids[i] {
			t.Fatalf("order: got %v, want %v", all, ids)
		}
	}

	if !hub.Unwatch("7") || hub.Unwatch("7") {
		t.Fatal("Unwatch reported wrongly")
	}
	create(t, theirs, model.Blocked)
	rec.waitFor(t, 10)
	time.Sleep(100 * time.Millisecond)
	for _, s := range rec.snapshot()[9:] {
		if s.id == "7" {
			t.Fatal("an unwatched watcher still received an event")
		}
	}
}

func TestHubDropsWatcherWhenConnectionFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	hub := New(s, nil, 10*time.Millisecond, slog.New(slog.DiscardHandler))
	rec := &recorder{fail: true}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { hub.Run(ctx, rec.notify); close(done) }()
	if reg, err := hub.Watch(ctx, "1", json.RawMessage(`1`), model.Filter{}); err != nil {
		t.Fatal(err)
	} else {
		reg.Arm()
	}
	create(t, s, model.Ready)
	deadline := time.Now().Add(5 * time.Second)
	for hub.Len() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if hub.Len() != 0 {
		t.Fatal("watcher kept after its notification failed")
	}
	cancel()
	<-done
	if reg, err := hub.Watch(context.Background(), "2", json.RawMessage(`2`), model.Filter{}); err != nil {
		t.Fatal(err)
	} else {
		reg.Arm()
	}
}

// A watcher gets nothing until it is armed (the backend arms it once the
// watch ack is written); events committed meanwhile wait, then arrive.
func TestHubHoldsWatcherUntilArmed(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	rec := &recorder{}
	hub, ctx := runHub(t, s, time.Hour, rec) // only nudges wake it
	reg, err := hub.Watch(ctx, "1", json.RawMessage(`1`), model.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	create(t, s, model.Ready)
	hub.Nudge()
	time.Sleep(100 * time.Millisecond)
	if n := len(rec.snapshot()); n != 0 {
		t.Fatalf("an unarmed watcher was sent %d event(s)", n)
	}
	reg.Arm()
	rec.waitFor(t, 1)
}

// Stop ends its own watch only: a newer watch that took over the key keeps
// receiving, and Done reports every way a watch ends.
func TestRegistrationStopAndDone(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	rec := &recorder{}
	hub, ctx := runHub(t, s, 10*time.Millisecond, rec)

	watch := func(key string) *Registration {
		t.Helper()
		reg, err := hub.Watch(ctx, key, json.RawMessage(`"`+key+`"`), model.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		reg.Arm()
		return reg
	}
	isDone := func(reg *Registration) bool {
		select {
		case <-reg.Done():
			return true
		default:
			return false
		}
	}

	old := watch("k")
	newer := watch("k") // replaces old under the same key
	if !isDone(old) || isDone(newer) {
		t.Fatalf("after replacement: old done %v, newer done %v; want true, false", isDone(old), isDone(newer))
	}
	old.Stop() // must not remove newer
	if hub.Len() != 1 {
		t.Fatalf("the replaced watch's Stop removed the newer one: %d watchers", hub.Len())
	}
	create(t, s, model.Ready)
	rec.waitFor(t, 1)

	newer.Stop()
	if !isDone(newer) || hub.Len() != 0 {
		t.Fatalf("after Stop: done %v, %d watchers", isDone(newer), hub.Len())
	}
	n := len(rec.snapshot())
	create(t, s, model.Ready)
	hub.Nudge()
	time.Sleep(100 * time.Millisecond)
	if got := len(rec.snapshot()); got != n {
		t.Fatalf("a stopped watch was sent %d more event(s)", got-n)
	}

	byUnwatch := watch("u")
	hub.Unwatch("u")
	if !isDone(byUnwatch) {
		t.Fatal("Unwatch did not close Done")
	}
}

// runHub starts a hub over src that polls every poll and sends to rec; it
// stops, and its Run returns, when the test ends. ctx is Run's context.
func runHub(t *testing.T, src Source, poll time.Duration, rec *recorder) (*Hub, context.Context) {
	t.Helper()
	hub := New(src, nil, poll, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { hub.Run(ctx, rec.notify); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return hub, ctx
}
