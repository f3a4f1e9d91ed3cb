package fakeslack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// conn is one Socket Mode websocket.
type conn struct {
	ws   *websocket.Conn
	wmu  sync.Mutex // gorilla allows one writer at a time
	done chan struct{}
	once sync.Once
}

func (c *conn) write(msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, msg)
}

func (c *conn) ping() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.WriteControl(websocket.PingMessage, []byte("fakeslack"), time.Now().Add(5*time.Second))
}

func (c *conn) close() {
	c.once.Do(func() {
		close(c.done)
		c.ws.Close()
	})
}

var upgrader = websocket.Upgrader{
	// Socket Mode clients send Origin https://api.slack.com, which is not
	// this host; Slack accepts it and so does the fake.
	CheckOrigin: func(*http.Request) bool { return true },
}

// connectionsOpen is apps.connections.open: app-level token only, a fresh
// websocket URL per call (Slack's URLs are single-use tickets).
func (s *Server) connectionsOpen(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.opens++
	forced := s.openError
	ticket := s.opens
	s.calls = append(s.calls, Call{Method: "apps.connections.open", Auth: r.Header.Get("Authorization")})
	s.broadcastLocked()
	s.mu.Unlock()
	token := bearer(r)
	switch {
	case forced != "":
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": forced})
	case token == "":
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "not_authed"})
	case equal(token, s.opts.BotToken):
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "not_allowed_token_type"})
	case !equal(token, s.opts.AppToken):
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
	default:
		url := fmt.Sprintf("ws://%s/link/?ticket=%d&app_id=%s", r.Host, ticket, s.opts.AppID)
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "url": url})
	}
}

// websocket serves one Socket Mode connection: hello, the greeting
// envelopes, PINGs, and acks read back.
func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws, done: make(chan struct{})}
	s.mu.Lock()
	n := len(s.live) + 1
	s.mu.Unlock()
	hello, _ := json.Marshal(map[string]any{
		"type":            "hello",
		"num_connections": n,
		"debug_info":      map[string]any{"host": "applink-fake-1", "build_number": 105, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": s.opts.AppID},
	})
	if c.write(hello) != nil {
		c.close()
		return
	}
	// Count and announce the connection only once hello is out, so an
	// envelope sent by a test waiting for it cannot overtake hello.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.close()
		return
	}
	s.opened++
	s.live = append(s.live, c)
	greeting := s.opts.Greeting
	s.broadcastLocked()
	s.mu.Unlock()
	defer s.drop(c)

	for _, env := range greeting {
		if s.deliver(c, env) != nil {
			return
		}
	}
	go s.pinger(c)
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if json.Unmarshal(msg, &ack) == nil && ack.EnvelopeID != "" {
			s.mu.Lock()
			if _, dup := s.acked[ack.EnvelopeID]; !dup {
				s.acked[ack.EnvelopeID] = time.Now()
			}
			s.ackLog = append(s.ackLog, ack.EnvelopeID)
			s.broadcastLocked()
			s.mu.Unlock()
		}
	}
}

func (s *Server) pinger(c *conn) {
	t := time.NewTicker(s.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if c.ping() != nil {
				return
			}
		}
	}
}

func (s *Server) drop(c *conn) {
	c.close()
	s.mu.Lock()
	for i, l := range s.live {
		if l == c {
			s.live = append(s.live[:i], s.live[i+1:]...)
			break
		}
	}
	s.broadcastLocked()
	s.mu.Unlock()
}

func (s *Server) newest() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.live) == 0 {
		return nil
	}
	return s.live[len(s.live)-1]
}

// deliver writes an envelope and notes when, for ack latency.
func (s *Server) deliver(c *conn, envelope []byte) error {
	var head struct {
		EnvelopeID string `json:"envelope_id"`
	}
	_ = json.Unmarshal(envelope, &head)
	if head.EnvelopeID != "" {
		s.mu.Lock()
		s.sent[head.EnvelopeID] = time.Now()
		s.mu.Unlock()
	}
	return c.write(envelope)
}

// Send delivers an envelope on the newest live connection, as Slack
// delivers to one of an app's open sockets.
func (s *Server) Send(envelope []byte) error {
	c := s.newest()
	if c == nil {
		return ErrNoConnection
	}
	return s.deliver(c, envelope)
}

// Disconnect sends Slack's {"type":"disconnect"} on the newest connection;
// the client is expected to open a new one.
func (s *Server) Disconnect(reason string) error {
	msg, _ := json.Marshal(map[string]any{"type": "disconnect", "reason": reason,
		"debug_info": map[string]any{"host": "applink-fake-1"}})
	return s.Send(msg)
}

// DropConnections closes every live websocket without a word, as a network
// failure would.
func (s *Server) DropConnections() {
	s.mu.Lock()
	live := append([]*conn(nil), s.live...)
	s.mu.Unlock()
	for _, c := range live {
		c.close()
	}
}

// WaitAck waits for the ack of envelopeID and returns the time from its
// delivery to the ack.
func (s *Server) WaitAck(ctx context.Context, envelopeID string) (time.Duration, error) {
	var lat time.Duration
	err := s.waitFor(ctx, "ack of "+envelopeID, func() bool {
		at, ok := s.acked[envelopeID]
		if ok {
			lat = at.Sub(s.sent[envelopeID])
		}
		return ok
	})
	return lat, err
}

// Acks returns the envelope id of every ack read so far, in the order
// read, a repeated ack (of a redelivered envelope) as often as it came.
func (s *Server) Acks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ackLog...)
}

// WaitAcks waits until n acks have been read, repeats included, and
// returns them as Acks does. A test that knows how many acks it has
// caused checks exactly which came, and in which order: WaitAck alone
// cannot tell a redelivery's ack from the first one.
func (s *Server) WaitAcks(ctx context.Context, n int) ([]string, error) {
	var acks []string
	err := s.waitFor(ctx, fmt.Sprintf("%d ack(s)", n), func() bool {
		acks = append([]string(nil), s.ackLog...)
		return len(acks) >= n
	})
	return acks, err
}

// Acked reports whether envelopeID was acked.
func (s *Server) Acked(envelopeID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.acked[envelopeID]
	return ok
}

// AckLatencies returns send-to-ack latencies of every acked envelope.
func (s *Server) AckLatencies() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]time.Duration, 0, len(s.acked))
	for id, at := range s.acked {
		if sent, ok := s.sent[id]; ok {
			out = append(out, at.Sub(sent))
		}
	}
	return out
}
