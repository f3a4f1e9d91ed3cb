package fakeslack

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack/slacktest"
)

// Options describe the fake workspace. Zero values take the defaults.
type Options struct {
	AppToken  string // app-level token accepted by apps.connections.open ("xapp-1-A0FAKE-fake")
	BotToken  string // bot token accepted by the Web API ("xoxb-fake")
	TeamID    string // "T0FAKE"
	BotUserID string // the bot's user id ("U0BOT")
	BotID     string // the bot's bot id ("B0BOT")
	AppID     string // "A0FAKE"
	// PingInterval is how often the websocket sends PINGs (default 2 s).
	// slack-go drops a connection that sees none for 30 s.
	PingInterval time.Duration
	// Greeting is sent to every new connection right after hello, as a
	// backlog Slack redelivers on connect would be.
	Greeting [][]byte
	// EchoBotMessages delivers the bot's own DM posts back as message.im
	// events, as Slack does.
	EchoBotMessages bool
}

func (o *Options) defaults() {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&o.AppToken, "xapp-1-A0FAKE-fake")
	def(&o.BotToken, "xoxb-fake")
	def(&o.TeamID, "T0FAKE")
	def(&o.BotUserID, "U0BOT")
	def(&o.BotID, "B0BOT")
	def(&o.AppID, "A0FAKE")
	if o.PingInterval <= 0 {
		o.PingInterval = 2 * time.Second
	}
}

// Server is a running fake Slack.
type Server struct {
	opts Options
	st   *slacktest.Server

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every state change
	live      []*conn
	opened    int // websocket connections accepted
	opens     int // apps.connections.open calls
	openError string
	failures  map[string][]Failure // FailNext queues
	standing  map[string]Failure   // SetFailure
	calls     []Call
	sent      map[string]time.Time
	acked     map[string]time.Time // first ack of each envelope id
	ackLog    []string             // every ack read, in order
	seq       int
	echoes    []string
	closed    bool
}

// Start starts a fake Slack on 127.0.0.1.
func Start(o Options) *Server {
	o.defaults()
	s := &Server{
		opts:     o,
		failures: map[string][]Failure{},
		standing: map[string]Failure{},
		sent:     map[string]time.Time{},
		acked:    map[string]time.Time{},
	}
	s.changed = make(chan struct{})
	// Custom binders run before slacktest registers its own handlers, and
	// the first registration of a path wins.
	s.st = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/apps.connections.open", s.connectionsOpen)
		c.Handle("/link/", s.websocket)
		c.Handle("/auth.test", s.webMethod("auth.test", s.authTest))
		c.Handle("/chat.postMessage", s.webMethod("chat.postMessage", s.postMessage))
		c.Handle("/chat.postEphemeral", s.webMethod("chat.postEphemeral", s.postEphemeral))
		c.Handle("/conversations.open", s.webMethod("conversations.open", s.conversationsOpen))
	})
	s.st.Start()
	return s
}

// New starts a fake Slack that t's cleanup stops.
func New(t testing.TB, o Options) *Server {
	s := Start(o)
	t.Cleanup(s.Close)
	return s
}

// Close drops every connection and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	live := append([]*conn(nil), s.live...)
	s.mu.Unlock()
	for _, c := range live {
		c.close()
	}
	s.st.Stop()
}

// Options returns the effective options (tokens, ids).
func (s *Server) Options() Options { return s.opts }

// APIBase is the value for SLACK_API_BASE.
func (s *Server) APIBase() string { return strings.TrimSuffix(s.st.GetAPIURL(), "/") }

// Env is the plugin environment that points it at this fake: tokens and
// API base.
func (s *Server) Env() map[string]string {
	return map[string]string{
		"SLACK_APP_TOKEN": s.opts.AppToken,
		"SLACK_BOT_TOKEN": s.opts.BotToken,
		"SLACK_API_BASE":  s.APIBase(),
	}
}

// SetOpenError makes apps.connections.open answer {"ok":false,"error":code}
// ("" restores normal answers).
func (s *Server) SetOpenError(code string) {
	s.mu.Lock()
	s.openError = code
	s.mu.Unlock()
}

// Opens counts apps.connections.open calls.
func (s *Server) Opens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opens
}

// Connections counts websocket connections accepted so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// WaitConnections waits until n connections have been accepted and one
// is live.
func (s *Server) WaitConnections(ctx context.Context, n int) error {
	return s.waitFor(ctx, fmt.Sprintf("%d websocket connection(s)", n), func() bool { return s.opened >= n && len(s.live) > 0 })
}

// NextTS returns a Slack-style message timestamp unique within the server.
func (s *Server) NextTS() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return "1715701234." + fmt.Sprintf("%06d", s.seq)
}

// NextID returns a unique suffix for envelope and event ids.
func (s *Server) NextID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return strconv.Itoa(s.seq)
}

// broadcastLocked wakes every waiter, each to re-check its own
// condition; s.mu must be held.
func (s *Server) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor blocks until cond (called with s.mu held) holds or ctx ends
// (10 s when ctx has no deadline). sync.Cond cannot wait with a deadline,
// hence the channel; the fake is its own module and has no e2e helpers.
func (s *Server) waitFor(ctx context.Context, what string, cond func() bool) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	for {
		s.mu.Lock()
		ok, changed := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("fakeslack: waiting for %s: %w", what, ctx.Err())
		}
	}
}

// ErrNoConnection is returned when an envelope has no live socket to go to.
var ErrNoConnection = errors.New("fakeslack: no live Socket Mode connection")

// Calls returns the recorded Web API calls to method ("" for all), in order.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Methods lists the distinct methods called so far (for failure messages).
func (s *Server) Methods() []string {
	seen := map[string]bool{}
	for _, c := range s.Calls("") {
		seen[c.Method] = true
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Echoes lists the envelope ids of the bot's own messages the fake sent
// back (EchoBotMessages).
func (s *Server) Echoes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.echoes...)
}
