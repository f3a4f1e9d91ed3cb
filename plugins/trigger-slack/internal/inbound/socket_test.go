package inbound

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
	"github.com/slack-go/slack"
)

// The Socket runs against e2e/fakeslack, the project's one fake Slack:
// apps.connections.open on slacktest, and a websocket that says hello,
// pings, delivers what a test sends and records the acks in order.

// waitLimit bounds every wait of these tests.
const waitLimit = 5 * time.Second

// envelope is an events_api envelope for inner, first delivery, with
// Slack event id "Ev"+id.
func envelope(id string, inner map[string]any) []byte {
	return fakeslack.EventsAPI(id, 0, fakeslack.Callback("T1", "Ev"+id, inner))
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// within is a context that ends with the test or after waitLimit.
func within(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// connected waits for the n-th websocket connection.
func connected(t *testing.T, fake *fakeslack.Server, n int) {
	t.Helper()
	if err := fake.WaitConnections(within(t), n); err != nil {
		t.Fatal(err)
	}
}

// send delivers frame on the newest connection.
func send(t *testing.T, fake *fakeslack.Server, frame []byte) {
	t.Helper()
	if err := fake.Send(frame); err != nil {
		t.Fatal(err)
	}
}

// expectAcks waits for the acks so far, which must be want, in order.
func expectAcks(t *testing.T, fake *fakeslack.Server, want ...string) {
	t.Helper()
	got, err := fake.WaitAcks(within(t), len(want))
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("acks %v (%v), want %v", got, err, want)
	}
}

func runSocket(t *testing.T, fake *fakeslack.Server, sink Sink) (*Status, context.CancelFunc, chan struct{}) {
	o := fake.Options()
	api := slack.New(o.BotToken, slack.OptionAppLevelToken(o.AppToken), slack.OptionAPIURL(fake.APIBase()+"/"))
	st := &Status{}
	s := &Socket{API: api, Logger: slog.New(slog.DiscardHandler), Status: st, Sink: sink, AuthRetry: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return st, cancel, done
}

func TestSocketAckDeliverReconnect(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	got := make(chan Delivery, 8)
	st, _, _ := runSocket(t, fake, func(ctx context.Context, d Delivery) error { got <- d; return nil })

	connected(t, fake, 1)
	send(t, fake, envelope("e1", fakeslack.Mention("C1", "U1", "", "1.1")))
	expectAcks(t, fake, "e1")
	d := waitFor(t, got, "delivery")
	if d.Transport != "socket" || !strings.Contains(string(d.Payload), `"event_id":"Eve1"`) {
		t.Fatalf("delivery = %+v", d)
	}
	if s := st.Get(); s.Phase != PhaseConnected || s.Connections != 1 {
		t.Fatalf("status %+v, want connected once", s)
	}

	// Slack asks for a reconnect; the next event arrives on the new socket,
	// with a trailing newline slack-go must not choke on.
	if err := fake.Disconnect("refresh_requested"); err != nil {
		t.Fatal(err)
	}
	connected(t, fake, 2)
	send(t, fake, append(envelope("e2", fakeslack.DirectMessage("D1", "U1", "", "2.2")), '\n'))
	expectAcks(t, fake, "e1", "e2")
	waitFor(t, got, "delivery after reconnect")
	if n := fake.Opens(); n != 2 {
		t.Fatalf("apps.connections.open called %d times, want 2", n)
	}
	if s := st.Get(); s.Phase != PhaseConnected || s.Connections != 2 {
		t.Fatalf("status %+v", s)
	}
}

// TestSocketRecoversFromOutages: a connection Slack drops without a word,
// or a reconnect Slack refuses for a while with a non-auth error, is
// reported as reconnecting and followed by a new socket that works.
func TestSocketRecoversFromOutages(t *testing.T) {
	cases := []struct {
		name   string
		outage func(*fakeslack.Server)
		seen   string // the status's last error while it lasts ("" = not checked)
		heal   func(*fakeslack.Server)
	}{
		{name: "connection dropped", outage: (*fakeslack.Server).DropConnections},
		{name: "apps.connections.open failing", outage: func(f *fakeslack.Server) {
			f.SetOpenError("internal_error") // before the drop, or the reconnect could win
			f.DropConnections()
		}, seen: "socket mode: internal_error", heal: func(f *fakeslack.Server) { f.SetOpenError("") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := fakeslack.New(t, fakeslack.Options{})
			st, _, _ := runSocket(t, fake, func(context.Context, Delivery) error { return nil })
			connected(t, fake, 1)
			send(t, fake, envelope("e1", fakeslack.Mention("C1", "U1", "", "1.1")))
			expectAcks(t, fake, "e1")

			tc.outage(fake)
			if tc.seen != "" {
				deadline := time.Now().Add(waitLimit)
				for s := st.Get(); s.Phase != PhaseReconnecting || s.LastError != tc.seen; s = st.Get() {
					if time.Now().After(deadline) {
						t.Fatalf("status %+v, want reconnecting with %q", s, tc.seen)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			if tc.heal != nil {
				tc.heal(fake)
			}
			connected(t, fake, 2)
			send(t, fake, envelope("e2", fakeslack.Mention("C1", "U1", "", "2.2")))
			expectAcks(t, fake, "e1", "e2")
			if s := st.Get(); s.Phase != PhaseConnected || s.Connections != 2 {
				t.Fatalf("status %+v, want connected a second time", s)
			}
		})
	}
}

// TestSocketUntypedEventStillAckedAndDelivered: slack-go cannot type an
// inner event it does not know; the envelope is still acked and delivered.
func TestSocketUntypedEventStillAckedAndDelivered(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	got := make(chan Delivery, 8)
	runSocket(t, fake, func(ctx context.Context, d Delivery) error { got <- d; return nil })
	connected(t, fake, 1)
	send(t, fake, envelope("e9", map[string]any{"type": "brand_new_event_2030", "channel": "C1", "ts": "9.9"}))
	expectAcks(t, fake, "e9")
	if d := waitFor(t, got, "delivery"); !strings.Contains(string(d.Payload), "brand_new_event_2030") {
		t.Fatalf("delivery = %s", d.Payload)
	}
	// Slash commands and interactivity are not events this plugin maps,
	// but Slack redelivers anything unacked: acked, not delivered.
	send(t, fake, []byte(`{"envelope_id":"s1","type":"slash_commands","accepts_response_payload":true,"payload":{"command":"/animus","text":"review","user_id":"U1","channel_id":"C1"}}`))
	send(t, fake, []byte(`{"envelope_id":"i1","type":"interactive","accepts_response_payload":false,"payload":{"type":"block_actions","user":{"id":"U1"}}}`))
	expectAcks(t, fake, "e9", "s1", "i1")
	select {
	case d := <-got:
		t.Fatalf("a slash command or interaction was delivered: %s", d.Payload)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestSocketInvalidAuthDoesNotSpin(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	fake.SetOpenError("invalid_auth")
	st, cancel, done := runSocket(t, fake, func(context.Context, Delivery) error { return nil })
	deadline := time.Now().Add(waitLimit)
	for st.Get().Phase != PhaseAuthFailed && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s := st.Get()
	if s.Phase != PhaseAuthFailed || !strings.Contains(s.LastError, "invalid_auth") {
		t.Fatalf("status %+v, want auth_failed naming invalid_auth", s)
	}
	time.Sleep(300 * time.Millisecond)
	if n := fake.Opens(); n != 1 {
		t.Fatalf("apps.connections.open called %d times after invalid_auth, want 1 (no spinning)", n)
	}
	start := time.Now()
	cancel()
	waitFor(t, done, "Run to return")
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Fatalf("Run took %v to stop while waiting to retry", el)
	}
}

func TestSocketStopsPromptlyWhileConnected(t *testing.T) {
	fake := fakeslack.New(t, fakeslack.Options{})
	st, cancel, done := runSocket(t, fake, func(context.Context, Delivery) error { return nil })
	connected(t, fake, 1)
	for st.Get().Phase != PhaseConnected {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	cancel()
	waitFor(t, done, "Run to return")
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Fatalf("Run took %v to stop with a live socket", el)
	}
	if p := st.Get().Phase; p != PhaseStopped {
		t.Fatalf("phase %v after stop", p)
	}
}
