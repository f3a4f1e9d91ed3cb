package trigger

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/inbound"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/store"
)

// logTo points s's log at a buffer, at debug level.
func logTo(s *Service) *bytes.Buffer {
	var b bytes.Buffer
	s.log = slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return &b
}

// TestPrune: expired seen-set entries are deleted by the emitter's prune,
// and a broken store is reported rather than fatal.
func TestPrune(t *testing.T) {
	cases := []struct {
		name    string
		advance time.Duration
		broken  bool
		log     string
		status  string // the ack status still stored afterwards
	}{
		{"nothing expired", time.Hour, false, "", "queued"},
		// Two rows: the event id and Slack's own event id.
		{"expired", 25 * time.Hour, false, `"msg":"pruned expired dedup entries","count":2`, ""},
		{"store broken", 25 * time.Hour, true, `"msg":"dedup prune failed"`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(1_700_000_000, 0)
			s := newEmitterService(t, &notifier{})
			s.store.Load().Close()
			st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "dedup.db"),
				store.Options{TTL: 24 * time.Hour, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			s.store.Store(st)
			s.process([]inbound.Delivery{delivery("Ev1", "C1", "1.1", "U1")})
			s.recordAck(context.Background(), AckParams{EventID: "slack:T1/C1/1.1", Status: "queued"})
			logs := logTo(s)
			now = now.Add(tc.advance)
			if tc.broken {
				st.Close()
			}
			s.prune()
			if tc.log == "" && strings.Contains(logs.String(), "prune") {
				t.Fatalf("unexpected prune log: %s", logs)
			}
			if !strings.Contains(logs.String(), tc.log) {
				t.Fatalf("logs %s, want %s", logs, tc.log)
			}
			if tc.broken {
				return
			}
			if got, _ := st.AckStatus(context.Background(), "slack:T1/C1/1.1"); got != tc.status {
				t.Fatalf("stored status %q, want %q", got, tc.status)
			}
		})
	}
}

// TestReleaseFailureIsLogged: when the host is gone and the seen-set is
// broken too, the claims cannot be released; that is logged, not fatal.
func TestReleaseFailureIsLogged(t *testing.T) {
	s := newEmitterService(t, &notifier{})
	logs := logTo(s)
	s.notify = func(string, any) error {
		s.store.Load().Close()
		return errors.New("stdout closed")
	}
	s.process([]inbound.Delivery{delivery("Ev1", "C1", "1.1", "U1"), delivery("Ev2", "C1", "2.2", "U1")})
	for _, want := range []string{"cannot emit trigger/event", `"msg":"cannot release dedup claim","event_id":"slack:T1/C1/1.1"`, `"event_id":"slack:T1/C1/2.2"`} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("logs lack %s:\n%s", want, logs)
		}
	}
	if n := s.Stats().Emitted.Load(); n != 0 {
		t.Fatalf("emitted %d", n)
	}
}

// TestFillBatches: a burst is claimed in batches of at most maxBatch, in
// queue order.
func TestFillBatches(t *testing.T) {
	cases := []struct {
		queued int
		want   []int
	}{
		{0, []int{0}},
		{3, []int{3, 0}},
		{maxBatch, []int{maxBatch, 0}},
		{maxBatch + 6, []int{maxBatch, 6, 0}},
	}
	for _, tc := range cases {
		s := New(config.Load(func(string) string { return "" }))
		for i := 0; i < tc.queued; i++ {
			s.queue <- inbound.Delivery{Retry: i}
		}
		next := 0
		for _, want := range tc.want {
			batch := s.fill(nil)
			if len(batch) != want {
				t.Fatalf("%d queued: batch of %d, want %d", tc.queued, len(batch), want)
			}
			for _, d := range batch {
				if d.Retry != next {
					t.Fatalf("%d queued: delivery %d out of order (want %d)", tc.queued, d.Retry, next)
				}
				next++
			}
		}
	}
}

// TestSink: a delivery waits for room in the queue, but not past the
// transport's context.
func TestSink(t *testing.T) {
	cases := []struct {
		name    string
		full    bool
		cancel  bool
		wantErr error
	}{
		{"room", false, false, nil},
		{"full, cancelled", true, true, context.Canceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(config.Load(func(string) string { return "" }))
			s.queue = make(chan inbound.Delivery, 1)
			if tc.full {
				s.queue <- inbound.Delivery{Transport: "earlier"}
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			}
			defer cancel()
			err := s.sink(ctx, inbound.Delivery{Transport: "socket"})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("sink = %v, want %v", err, tc.wantErr)
			}
			if got := (<-s.queue).Transport; tc.wantErr == nil && got != "socket" || tc.wantErr != nil && got != "earlier" {
				t.Fatalf("queue head %q", got)
			}
		})
	}
}
