package trigger

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/inbound"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/mapping"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/store"
)

// notifier records notifications and can fail from the n-th one on.
type notifier struct {
	mu     sync.Mutex
	sent   []mapping.Event
	failAt int // 0 = never
}

func (n *notifier) notify(method string, params any) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.failAt > 0 && len(n.sent)+1 >= n.failAt {
		return errors.New("stdout closed")
	}
	n.sent = append(n.sent, params.(mapping.Event))
	return nil
}

func newEmitterService(t *testing.T, n *notifier) *Service {
	t.Helper()
	s := New(config.Load(func(string) string { return "" }))
	s.notify = n.notify
	s.rules = mapping.Rules{MentionTriggerID: "m", DMTriggerID: "d", IgnoreBots: true}
	s.identity.Store(&mapping.Identity{UserID: "UBOT", BotID: "BBOT"})
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "dedup.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s.store.Store(st)
	return s
}

func delivery(evID, channel, ts, user string) inbound.Delivery {
	inner := map[string]any{"type": "app_mention", "channel": channel, "ts": ts, "user": user, "text": "hi"}
	b, _ := json.Marshal(map[string]any{"type": "event_callback", "team_id": "T1", "event_id": evID, "event": inner})
	return inbound.Delivery{Payload: b, Transport: "socket"}
}

func TestProcessDedupsAndKeepsOrder(t *testing.T) {
	n := &notifier{}
	s := newEmitterService(t, n)
	s.process([]inbound.Delivery{
		delivery("Ev1", "C1", "1.1", "U1"),
		delivery("Ev2", "C1", "2.2", "U1"),
		delivery("Ev1", "C1", "1.1", "U1"),   // duplicate envelope
		delivery("Ev3", "C1", "3.3", "UBOT"), // the bot itself
		{Payload: json.RawMessage(`{"type":`)},
	})
	s.process([]inbound.Delivery{delivery("Ev2", "C1", "2.2", "U1")}) // a retry, later
	if len(n.sent) != 2 || n.sent[0].EventID != "slack:T1/C1/1.1" || n.sent[1].EventID != "slack:T1/C1/2.2" {
		t.Fatalf("sent = %+v", n.sent)
	}
	if s.stats.Emitted.Load() != 2 || s.stats.Duplicates.Load() != 2 || s.stats.Dropped.Load() != 2 {
		t.Fatalf("stats emitted %d duplicates %d dropped %d", s.stats.Emitted.Load(), s.stats.Duplicates.Load(), s.stats.Dropped.Load())
	}
}

// TestFailedNotifyReleasesClaims: when the host is gone mid-batch, the
// events not written are forgotten, so the next process emits them.
func TestFailedNotifyReleasesClaims(t *testing.T) {
	n := &notifier{failAt: 2}
	s := newEmitterService(t, n)
	batch := []inbound.Delivery{delivery("Ev1", "C1", "1.1", "U1"), delivery("Ev2", "C1", "2.2", "U1"), delivery("Ev3", "C1", "3.3", "U1")}
	s.process(batch)
	if len(n.sent) != 1 {
		t.Fatalf("sent %d", len(n.sent))
	}
	n.failAt = 0
	s.process(batch)
	if len(n.sent) != 3 || n.sent[1].EventID != "slack:T1/C1/2.2" || n.sent[2].EventID != "slack:T1/C1/3.3" {
		t.Fatalf("after recovery sent = %+v", n.sent)
	}
}

// TestStoreFailureStillEmits: a broken seen-set degrades health but does
// not drop requests.
func TestStoreFailureStillEmits(t *testing.T) {
	n := &notifier{}
	s := newEmitterService(t, n)
	s.store.Load().Close()
	s.status = &inbound.Status{}
	s.process([]inbound.Delivery{delivery("Ev1", "C1", "1.1", "U1")})
	if len(n.sent) != 1 {
		t.Fatalf("sent %d, want the event emitted without dedup", len(n.sent))
	}
	if e := s.storeErr.Load(); e == nil || !strings.Contains(*e, "dedup store unavailable") {
		t.Fatalf("storeErr = %v", e)
	}
}

func TestEmitFlushesQueueOnStop(t *testing.T) {
	n := &notifier{}
	s := newEmitterService(t, n)
	for i, ts := range []string{"1.1", "2.2", "3.3"} {
		s.queue <- delivery("Ev"+ts, "C1", ts, "U1")
		_ = i
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.emit(ctx)
	if len(n.sent) != 3 {
		t.Fatalf("sent %d of 3 queued events on stop", len(n.sent))
	}
}

func TestAckRecorded(t *testing.T) {
	n := &notifier{}
	s := newEmitterService(t, n)
	s.process([]inbound.Delivery{delivery("Ev1", "C1", "1.1", "U1")})
	res, err := s.Ack(context.Background(), AckParams{EventID: "slack:T1/C1/1.1", Status: "queued"})
	if err != nil || res != (AckResult{EventID: "slack:T1/C1/1.1", Acked: true}) {
		t.Fatalf("Ack = %+v, %v", res, err)
	}
	if st, _ := s.store.Load().AckStatus(context.Background(), "slack:T1/C1/1.1"); st != "queued" {
		t.Fatalf("status %q", st)
	}
	if err := s.AckNotification(context.Background(), AckParams{EventID: "slack:T1/C1/1.1", Status: "some_future_status"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.store.Load().AckStatus(context.Background(), "slack:T1/C1/1.1"); st != "some_future_status" {
		t.Fatalf("unknown statuses must be kept as sent, got %q", st)
	}
	if err := (AckParams{}).Validate(); err == nil {
		t.Fatal("empty event_id accepted")
	}
}

func TestWatchParams(t *testing.T) {
	cases := []struct {
		config string
		want   string
		errMsg string
	}{
		{"", "", ""},
		{"null", "", ""},
		{`{}`, "", ""},
		{`{"trigger_id":" wf-1 ","other":1}`, "wf-1", ""},
		{`{"trigger_id":null}`, "", ""},
		{`{"trigger_id":7}`, "", `field "config.trigger_id": expected string`},
		{`"slack"`, "", `field "config": expected object`},
		{`[1]`, "", `field "config": expected object`},
	}
	for _, tc := range cases {
		p := WatchParams{Config: json.RawMessage(tc.config)}
		got, err := p.triggerID()
		if tc.errMsg != "" {
			var pe *pluginkit.Error
			if !errors.As(err, &pe) || pe.Code != pluginkit.CodeInvalidParams || !strings.Contains(pe.Message, tc.errMsg) {
				t.Errorf("config %s: err %v, want -32602 %q", tc.config, err, tc.errMsg)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("config %s: %q, %v; want %q", tc.config, got, err, tc.want)
		}
	}
}

func TestWatchConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		code int
		msg  string
	}{
		{"no app token", map[string]string{}, -32603, "backend unavailable: SLACK_APP_TOKEN unset"},
		{"no bot token", map[string]string{"SLACK_APP_TOKEN": "xapp-1"}, -32603, "backend unavailable: SLACK_BOT_TOKEN unset"},
		{"no trigger id", map[string]string{"SLACK_APP_TOKEN": "xapp-1", "SLACK_BOT_TOKEN": "xoxb-1"}, -32603, "backend unavailable: SLACK_TRIGGER_ID unset"},
		{"http no secret", map[string]string{"SLACK_MODE": "http", "SLACK_BOT_TOKEN": "xoxb-1"}, -32603, "backend unavailable: SLACK_SIGNING_SECRET unset"},
		{"bad mode", map[string]string{"SLACK_MODE": "smoke-signals"}, -32603, "invalid configuration: SLACK_MODE must be socket or http"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(config.Load(func(k string) string { return tc.env[k] }))
			_, err := s.Watch(context.Background(), WatchParams{})
			var pe *pluginkit.Error
			if !errors.As(err, &pe) || pe.Code != tc.code || pe.Category != pluginkit.CategoryUnavailable || !strings.HasPrefix(pe.Message, tc.msg) {
				t.Fatalf("Watch error = %v, want %d unavailable %q", err, tc.code, tc.msg)
			}
			if h := s.Health(context.Background()); h.Status != pluginkit.Unhealthy || h.LastError == "" {
				t.Fatalf("health = %+v, want unhealthy with a reason", h)
			}
		})
	}
}

func TestHealthPhases(t *testing.T) {
	s := New(config.Load(func(k string) string {
		return map[string]string{"SLACK_APP_TOKEN": "a", "SLACK_BOT_TOKEN": "b", "SLACK_TRIGGER_ID": "t"}[k]
	}))
	if h := s.Health(context.Background()); h.Status != pluginkit.Healthy {
		t.Fatalf("configured, not watching: %+v", h)
	}
	s.watching.Store(true)
	st := s.status
	cases := []struct {
		set  func()
		want pluginkit.HealthStatus
		err  string
	}{
		{func() {}, pluginkit.Degraded, "socket mode idle"},
		{st.Connecting, pluginkit.Degraded, "socket mode connecting"},
		{st.Connected, pluginkit.Healthy, ""},
		{func() { st.Set(inbound.PhaseReconnecting, "socket mode: dial tcp: refused") }, pluginkit.Degraded, "dial tcp: refused"},
		{func() { st.Set(inbound.PhaseAuthFailed, "socket mode: Slack rejected the app token (invalid_auth)") }, pluginkit.Unhealthy, "invalid_auth"},
		{st.Connected, pluginkit.Healthy, ""},
	}
	for i, tc := range cases {
		tc.set()
		h := s.Health(context.Background())
		if h.Status != tc.want || !strings.Contains(h.LastError, tc.err) {
			t.Fatalf("step %d: health %+v, want %s with %q", i, h, tc.want, tc.err)
		}
	}
}

// TestHealthWhileWatching: the states TestHealthPhases does not reach: an
// Events API listener, a failed one, and a seen-set failure on a healthy
// stream.
func TestHealthWhileWatching(t *testing.T) {
	storeDown := "dedup store unavailable; emitting without dedup"
	cases := []struct {
		name     string
		mode     string
		phase    inbound.Phase
		lastErr  string
		storeErr *string
		want     pluginkit.HealthStatus
		err      string
	}{
		{"events api not started yet", "http", inbound.PhaseIdle, "", nil, pluginkit.Degraded, "events api idle"},
		{"events api listening", "http", inbound.PhaseListening, "", nil, pluginkit.Healthy, ""},
		{"events api listener died", "http", inbound.PhaseFailed, "events api listener: accept: too many files", nil, pluginkit.Unhealthy, "too many files"},
		{"failed without a reason", "http", inbound.PhaseFailed, "", nil, pluginkit.Unhealthy, "failed"},
		{"listening, seen-set down", "http", inbound.PhaseListening, "", &storeDown, pluginkit.Degraded, storeDown},
		{"connected, seen-set down", "socket", inbound.PhaseConnected, "", &storeDown, pluginkit.Degraded, storeDown},
		{"stopped", "socket", inbound.PhaseStopped, "", nil, pluginkit.Degraded, "socket mode stopped"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(config.Load(func(k string) string { return map[string]string{"SLACK_MODE": tc.mode}[k] }))
			s.watching.Store(true)
			s.status.Set(tc.phase, tc.lastErr)
			s.storeErr.Store(tc.storeErr)
			h := s.Health(context.Background())
			if h.Status != tc.want || !strings.Contains(h.LastError, tc.err) || (tc.err == "") != (h.LastError == "") {
				t.Fatalf("health %+v, want %s with %q", h, tc.want, tc.err)
			}
		})
	}
}

// TestCloseIsIdempotent: Close closes the seen-set once; without a watch
// there is nothing to close.
func TestCloseIsIdempotent(t *testing.T) {
	s := newEmitterService(t, &notifier{})
	st := s.store.Load()
	for i := 0; i < 2; i++ {
		if err := s.Close(context.Background()); err != nil {
			t.Fatalf("Close %d: %v", i, err)
		}
	}
	if s.store.Load() != nil {
		t.Fatal("store still set after Close")
	}
	if _, err := st.AckStatus(context.Background(), "x"); err == nil {
		t.Fatal("the seen-set is still open after Close")
	}
}
