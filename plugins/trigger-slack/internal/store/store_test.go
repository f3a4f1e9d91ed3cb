package store

import (
	"context"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type clock struct{ t atomic.Int64 }

func (c *clock) now() time.Time       { return time.UnixMilli(c.t.Load()) }
func (c *clock) add(d time.Duration)  { c.t.Add(d.Milliseconds()) }
func newClock(start time.Time) *clock { c := &clock{}; c.t.Store(start.UnixMilli()); return c }

func openAt(t *testing.T, path string, o Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func item(id string, keys ...string) Item { return Item{EventID: id, Keys: keys} }

func TestClaim(t *testing.T) {
	cases := []struct {
		name  string
		batch [][]Item // batches claimed in order
		want  [][]bool
	}{
		{"fresh then duplicate",
			[][]Item{{item("e1", "event:e1", "slack:Ev1")}, {item("e1", "event:e1", "slack:Ev1")}},
			[][]bool{{true}, {false}}},
		{"same Slack delivery, other event id (retry of one envelope)",
			[][]Item{{item("e1", "event:e1", "slack:Ev1")}, {item("e2", "event:e2", "slack:Ev1")}},
			[][]bool{{true}, {false}}},
		{"same message as mention and as dm (two Slack ids, one event id)",
			[][]Item{{item("e1", "event:e1", "slack:Ev1")}, {item("e1", "event:e1", "slack:Ev2")}},
			[][]bool{{true}, {false}}},
		{"duplicates inside one batch",
			[][]Item{{item("e1", "event:e1"), item("e2", "event:e2"), item("e1", "event:e1")}},
			[][]bool{{true, true, false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openAt(t, filepath.Join(t.TempDir(), "d.db"), Options{})
			for i, b := range tc.batch {
				got, err := s.Claim(context.Background(), b)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want[i]) {
					t.Fatalf("batch %d: %v, want %v", i, got, tc.want[i])
				}
			}
		})
	}
}

func TestClaimNeedsKeys(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "d.db"), Options{})
	if _, err := s.Claim(context.Background(), []Item{{EventID: "x"}}); err == nil {
		t.Fatal("an item without keys was accepted")
	}
}

func TestPersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.db")
	ctx := context.Background()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Claim(ctx, []Item{item("e1", "event:e1")}); err != nil || !got[0] {
		t.Fatalf("claim: %v %v", got, err)
	}
	s.Close()
	s2 := openAt(t, path, Options{})
	if got, err := s2.Claim(ctx, []Item{item("e1", "event:e1")}); err != nil || got[0] {
		t.Fatalf("after reopen the event was claimed again: %v %v", got, err)
	}
}

func TestTTL(t *testing.T) {
	ctx := context.Background()
	c := newClock(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	s := openAt(t, filepath.Join(t.TempDir(), "d.db"), Options{TTL: time.Hour, Now: c.now})
	claim := func() bool {
		got, err := s.Claim(ctx, []Item{item("e1", "event:e1")})
		if err != nil {
			t.Fatal(err)
		}
		return got[0]
	}
	if !claim() {
		t.Fatal("first claim refused")
	}
	c.add(59 * time.Minute)
	if claim() {
		t.Fatal("claimed again inside the TTL")
	}
	c.add(2 * time.Minute)
	if !claim() {
		t.Fatal("expired entry still blocks the event")
	}
	c.add(2 * time.Hour)
	n, err := s.Prune(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
}

func TestReleaseAndAck(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "d.db"), Options{})
	keys := []string{"event:e1", "slack:Ev1"}
	if _, err := s.Claim(ctx, []Item{{EventID: "e1", Keys: keys}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.RecordAck(ctx, "e1", "queued"); err != nil || !ok {
		t.Fatalf("RecordAck = %v %v", ok, err)
	}
	if st, err := s.AckStatus(ctx, "e1"); err != nil || st != "queued" {
		t.Fatalf("AckStatus = %q %v", st, err)
	}
	if ok, err := s.RecordAck(ctx, "never-emitted", "queued"); err != nil || ok {
		t.Fatalf("RecordAck of an unknown id = %v %v", ok, err)
	}
	if st, err := s.AckStatus(ctx, "never-emitted"); err != nil || st != "" {
		t.Fatalf("AckStatus of an unknown id = %q %v", st, err)
	}
	if err := s.Release(ctx, keys); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Claim(ctx, []Item{{EventID: "e1", Keys: keys}}); err != nil || !got[0] {
		t.Fatalf("released event not claimable: %v %v", got, err)
	}
	if st, _ := s.AckStatus(ctx, "e1"); st != "" {
		t.Fatalf("a re-claimed event kept its old ack status %q", st)
	}
}

// TestConcurrentClaimants stands in for several plugin processes sharing
// one SLACK_STATE_DIR: separate connection pools on one file race to claim
// the same events, and each event is won exactly once.
func TestConcurrentClaimants(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.db")
	const claimants, events = 4, 50
	stores := make([]*Store, claimants)
	for i := range stores {
		stores[i] = openAt(t, path, Options{})
	}
	var wins [events]atomic.Int32
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range events {
				id := "e" + string(rune('A'+e%26)) + string(rune('a'+e/26))
				got, err := s.Claim(context.Background(), []Item{item(id, "event:"+id)})
				if err != nil {
					t.Error(err)
					return
				}
				if got[0] {
					wins[e].Add(1)
				}
			}
		}()
	}
	wg.Wait()
	for e := range events {
		if n := wins[e].Load(); n != 1 {
			t.Errorf("event %d won %d times, want exactly once", e, n)
		}
	}
}
