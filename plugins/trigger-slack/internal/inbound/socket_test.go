package inbound

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
)

// miniSlack is the smallest Socket Mode server these unit tests need:
// apps.connections.open, a websocket that says hello, pings, and reports
// acks. The e2e suite's fakeslack is the full one.
type miniSlack struct {
	srv      *httptest.Server
	authFail atomic.Bool
	opens    atomic.Int32
	conns    chan *websocket.Conn
	acks     chan string
	wmu      sync.Mutex
}

func newMiniSlack(t *testing.T) *miniSlack {
	m := &miniSlack{conns: make(chan *websocket.Conn, 8), acks: make(chan string, 64)}
	mux := http.NewServeMux()
	mux.HandleFunc("/apps.connections.open", func(w http.ResponseWriter, r *http.Request) {
		m.opens.Add(1)
		if m.authFail.Load() || r.Header.Get("Authorization") != "Bearer xapp-test" {
			fmt.Fprint(w, `{"ok":false,"error":"invalid_auth"}`)
			return
		}
		fmt.Fprintf(w, `{"ok":true,"url":"ws://%s/link"}`, r.Host)
	})
	mux.HandleFunc("/link", func(w http.ResponseWriter, r *http.Request) {
		// slack-go sends Origin https://api.slack.com, as Slack expects.
		up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		m.write(c, `{"type":"hello","num_connections":1,"connection_info":{"app_id":"A1"}}`)
		m.conns <- c
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
					m.wmu.Lock()
					_ = c.WriteControl(websocket.PingMessage, nil, time.Now().Add(time.Second))
					m.wmu.Unlock()
				}
			}
		}()
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			var ack struct {
				EnvelopeID string `json:"envelope_id"`
			}
			if json.Unmarshal(msg, &ack) == nil && ack.EnvelopeID != "" {
				m.acks <- ack.EnvelopeID
			}
		}
	})
	m.srv = httptest.NewServer(mux)
	t.Cleanup(m.srv.Close)
	return m
}

func (m *miniSlack) write(c *websocket.Conn, s string) {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	_ = c.WriteMessage(websocket.TextMessage, []byte(s))
}

func envelope(id, inner string) string {
	return `{"envelope_id":"` + id + `","type":"events_api","accepts_response_payload":false,"retry_attempt":0,"retry_reason":"",` +
		`"payload":{"type":"event_callback","team_id":"T1","event_id":"Ev` + id + `","event":` + inner + `}}`
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

func runSocket(t *testing.T, m *miniSlack, sink Sink) (*Status, context.CancelFunc, chan struct{}) {
	api := slack.New("xoxb-test", slack.OptionAppLevelToken("xapp-test"), slack.OptionAPIURL(m.srv.URL+"/"))
	st := &Status{}
	s := &Socket{API: api, Logger: slog.New(slog.DiscardHandler), Status: st, Sink: sink, AuthRetry: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return st, cancel, done
}

func TestSocketAckDeliverReconnect(t *testing.T) {
	m := newMiniSlack(t)
	got := make(chan Delivery, 8)
	st, _, _ := runSocket(t, m, func(ctx context.Context, d Delivery) error { got <- d; return nil })

	c := waitFor(t, m.conns, "first connection")
	m.write(c, envelope("e1", `{"type":"app_mention","channel":"C1","ts":"1.1","user":"U1"}`))
	if id := waitFor(t, m.acks, "ack"); id != "e1" {
		t.Fatalf("acked %q", id)
	}
	d := waitFor(t, got, "delivery")
	if d.Transport != "socket" || !strings.Contains(string(d.Payload), `"event_id":"Eve1"`) {
		t.Fatalf("delivery = %+v", d)
	}
	if s := st.Get(); s.Phase != PhaseConnected || s.Connections != 1 {
		t.Fatalf("status %+v, want connected once", s)
	}

	// Slack asks for a reconnect; the next event arrives on the new socket.
	m.write(c, `{"type":"disconnect","reason":"refresh_requested","debug_info":{"host":"applink-1"}}`)
	c2 := waitFor(t, m.conns, "second connection")
	m.write(c2, envelope("e2", `{"type":"message","channel_type":"im","channel":"D1","ts":"2.2","user":"U1"}`)+"\n")
	if id := waitFor(t, m.acks, "ack after reconnect"); id != "e2" {
		t.Fatalf("acked %q", id)
	}
	waitFor(t, got, "delivery after reconnect")
	if m.opens.Load() != 2 {
		t.Fatalf("apps.connections.open called %d times, want 2", m.opens.Load())
	}
	if s := st.Get(); s.Phase != PhaseConnected || s.Connections != 2 {
		t.Fatalf("status %+v", s)
	}
}

// TestSocketUntypedEventStillAckedAndDelivered: slack-go cannot type an
// inner event it does not know; the envelope is still acked and delivered.
func TestSocketUntypedEventStillAckedAndDelivered(t *testing.T) {
	m := newMiniSlack(t)
	got := make(chan Delivery, 8)
	runSocket(t, m, func(ctx context.Context, d Delivery) error { got <- d; return nil })
	c := waitFor(t, m.conns, "connection")
	m.write(c, envelope("e9", `{"type":"brand_new_event_2030","channel":"C1","ts":"9.9"}`))
	if id := waitFor(t, m.acks, "ack"); id != "e9" {
		t.Fatalf("acked %q", id)
	}
	if d := waitFor(t, got, "delivery"); !strings.Contains(string(d.Payload), "brand_new_event_2030") {
		t.Fatalf("delivery = %s", d.Payload)
	}
	// Slash commands and interactivity are not events this plugin maps,
	// but Slack redelivers anything unacked: acked, not delivered.
	m.write(c, `{"envelope_id":"s1","type":"slash_commands","accepts_response_payload":true,"payload":{"command":"/animus","text":"review","user_id":"U1","channel_id":"C1"}}`)
	m.write(c, `{"envelope_id":"i1","type":"interactive","accepts_response_payload":false,"payload":{"type":"block_actions","user":{"id":"U1"}}}`)
	for _, want := range []string{"s1", "i1"} {
		if id := waitFor(t, m.acks, "ack of "+want); id != want {
			t.Fatalf("acked %q, want %q", id, want)
		}
	}
	select {
	case d := <-got:
		t.Fatalf("a slash command or interaction was delivered: %s", d.Payload)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestSocketInvalidAuthDoesNotSpin(t *testing.T) {
	m := newMiniSlack(t)
	m.authFail.Store(true)
	st, cancel, done := runSocket(t, m, func(context.Context, Delivery) error { return nil })
	deadline := time.Now().Add(5 * time.Second)
	for st.Get().Phase != PhaseAuthFailed && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	s := st.Get()
	if s.Phase != PhaseAuthFailed || !strings.Contains(s.LastError, "invalid_auth") {
		t.Fatalf("status %+v, want auth_failed naming invalid_auth", s)
	}
	time.Sleep(300 * time.Millisecond)
	if n := m.opens.Load(); n != 1 {
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
	m := newMiniSlack(t)
	st, cancel, done := runSocket(t, m, func(context.Context, Delivery) error { return nil })
	waitFor(t, m.conns, "connection")
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
