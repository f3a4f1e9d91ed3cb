package fakedaemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/internal/waitcond"
)

// WorkflowEventsMode selects how workflow/events behaves (§1.3, §7 item 5).
type WorkflowEventsMode int

const (
	// WorkflowEventsOn: the broadcaster is wired; the stream works and ends
	// with subscription/closed on CloseWorkflowStreams.
	WorkflowEventsOn WorkflowEventsMode = iota
	// WorkflowEventsUnavailable: no broadcaster, -32603 category unavailable.
	WorkflowEventsUnavailable
	// WorkflowEventsUnknown: an older daemon, -32601.
	WorkflowEventsUnknown
)

// Options configure a Daemon.
type Options struct {
	// Path is the socket path; empty means control.sock in a fresh temp dir
	// that Close removes.
	Path string
	// NotifyBeforeAck writes a stream's first notifications (daemon/logs
	// history, daemon/events replay) before its ack, as the real daemon can.
	NotifyBeforeAck bool
	// WorkflowEvents selects the workflow/events behaviour.
	WorkflowEvents WorkflowEventsMode
	// ProjectRoot is reported by daemon/status.
	ProjectRoot string
}

// Request is one frame the daemon received (requests and notifications).
type Request struct {
	Conn   int // 1-based connection number, in accept order
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	At     time.Time
}

// Daemon is a running fake control server.
type Daemon struct {
	opts    Options
	path    string
	tmpDir  string
	ln      net.Listener
	started time.Time

	mu       sync.Mutex
	changed  *waitcond.Cond // wakes waiters on every state change
	conns    map[*session]bool
	accepted int
	requests []Request
	cancels  []string
	faults   map[string]fault
	closed   bool

	state  *state
	bus    *bus
	wg     sync.WaitGroup
	cancel context.CancelFunc
	ctx    context.Context
}

// Start binds the socket (mode 0700, any stale file removed) and serves.
func Start(o Options) (*Daemon, error) {
	d := &Daemon{opts: o, path: o.Path, started: time.Now(), conns: map[*session]bool{}, faults: map[string]fault{}}
	d.changed = waitcond.New(&d.mu)
	if d.path == "" {
		dir, err := os.MkdirTemp("", "fakedaemon-*")
		if err != nil {
			return nil, err
		}
		d.tmpDir, d.path = dir, filepath.Join(dir, "control.sock")
	}
	if err := os.MkdirAll(filepath.Dir(d.path), 0o700); err != nil {
		return nil, err
	}
	_ = os.Remove(d.path)
	ln, err := net.Listen("unix", d.path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(d.path, 0o700); err != nil {
		ln.Close()
		return nil, err
	}
	d.ln = ln
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.state = newState(d.started)
	d.bus = newBus()
	d.wg.Add(1)
	go d.acceptLoop()
	return d, nil
}

// New is Start for tests, with Close registered as cleanup.
func New(tb testing.TB, o Options) *Daemon {
	tb.Helper()
	d, err := Start(o)
	if err != nil {
		tb.Fatalf("fakedaemon: %v", err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// Path is the socket path to hand to transport/start.
func (d *Daemon) Path() string { return d.path }

// Close stops listening, drops every connection (aborting their streams)
// and removes the socket. It is idempotent.
func (d *Daemon) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	sessions := make([]*session, 0, len(d.conns))
	for s := range d.conns {
		sessions = append(sessions, s)
	}
	d.mu.Unlock()
	d.ln.Close()
	d.cancel()
	for _, s := range sessions {
		s.nc.Close()
	}
	d.wg.Wait()
	os.Remove(d.path)
	if d.tmpDir != "" {
		os.RemoveAll(d.tmpDir)
	}
	return nil
}

func (d *Daemon) acceptLoop() {
	defer d.wg.Done()
	for {
		nc, err := d.ln.Accept()
		if err != nil {
			return
		}
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			nc.Close()
			return
		}
		d.accepted++
		s := newSession(d, nc, d.accepted)
		d.conns[s] = true
		d.mu.Unlock()
		d.broadcast()
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			s.serve()
			d.mu.Lock()
			delete(d.conns, s)
			d.mu.Unlock()
			d.broadcast()
		}()
	}
}

// broadcast wakes every waiter.
func (d *Daemon) broadcast() { d.changed.Broadcast() }

// waitFor blocks until cond (run with d.mu held) holds or ctx ends.
func (d *Daemon) waitFor(ctx context.Context, cond func() bool) error {
	return d.changed.Wait(ctx, cond)
}

// session is one accepted connection.
type session struct {
	d   *Daemon
	nc  net.Conn
	num int
	wmu sync.Mutex

	mu      sync.Mutex
	streams map[string]*stream // by stringified request id
}

func newSession(d *Daemon, nc net.Conn, num int) *session {
	return &session{d: d, nc: nc, num: num, streams: map[string]*stream{}}
}

// frame is an inbound request or notification.
type frame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// serve reads frames in order and answers each unary request before reading
// the next line, as the real daemon does.
func (s *session) serve() {
	defer s.abortStreams()
	defer s.nc.Close()
	r := bufio.NewReaderSize(s.nc, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if !s.handle(line) {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// handle processes one line; false means the connection was dropped.
func (s *session) handle(line []byte) bool {
	var f frame
	if err := json.Unmarshal(line, &f); err != nil || f.Method == "" {
		msg := "parse error: expected a JSON-RPC request"
		if err != nil {
			msg = "parse error: " + err.Error()
		}
		s.write(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": -32700, "message": msg}})
		return true
	}
	s.d.record(Request{Conn: s.num, ID: f.ID, Method: f.Method, Params: f.Params, At: time.Now()})
	if f.Method == "$/cancelRequest" {
		s.cancelStream(f.Params)
		return true
	}
	if flt, ok := s.d.fault(f.Method); ok {
		if flt.delay > 0 {
			select {
			case <-time.After(flt.delay):
			case <-s.d.ctx.Done():
				return false
			}
		}
		switch {
		case flt.drop:
			return false
		case flt.garbage:
			s.writeRaw([]byte(`{"jsonrpc":"2.0","id":` + string(orNull(f.ID)) + `,"result":{"truncat` + "\n"))
			return true
		case flt.err != nil:
			s.reply(f.ID, nil, flt.err)
			return true
		}
	}
	if spec, ok := streamMethods[f.Method]; ok {
		s.openStream(f, spec)
		return true
	}
	res, cerr := s.d.dispatch(f.Method, f.Params)
	s.reply(f.ID, res, cerr)
	return true
}

func orNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

// reply answers a request; a request without an id gets its answer without
// one, as the daemon does.
func (s *session) reply(id json.RawMessage, result any, cerr *controlError) {
	m := map[string]any{"jsonrpc": "2.0"}
	if len(id) > 0 {
		m["id"] = id
	}
	if cerr != nil {
		m["error"] = cerr.wire()
	} else {
		if result == nil {
			result = struct{}{}
		}
		m["result"] = result
	}
	s.write(m)
}

func (s *session) write(v any) {
	// serde_json, which the daemon writes with, leaves <, > and & as they
	// are; json.Marshal would turn them into \u003c and friends.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": -32603, "message": "internal: " + err.Error()}})
	}
	s.writeRaw(buf.Bytes()) // Encode ends the line
}

func (s *session) writeRaw(b []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := s.nc.Write(b); err != nil {
		s.nc.Close()
	}
}

func (d *Daemon) record(r Request) {
	d.mu.Lock()
	d.requests = append(d.requests, r)
	if r.Method == "$/cancelRequest" {
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(r.Params, &p) == nil {
			d.cancels = append(d.cancels, string(p.ID))
		}
	}
	d.mu.Unlock()
	d.broadcast()
}

// Requests returns every frame received so far, in arrival order.
func (d *Daemon) Requests() []Request {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Request(nil), d.requests...)
}

// Calls returns the methods received so far, in order.
func (d *Daemon) Calls() []string {
	var out []string
	for _, r := range d.Requests() {
		out = append(out, r.Method)
	}
	return out
}

// WaitRequest waits for the first request for method at or after index
// from, returning it and its index.
func (d *Daemon) WaitRequest(ctx context.Context, method string, from int) (Request, int, error) {
	var found Request
	idx := -1
	err := d.waitFor(ctx, func() bool {
		for i := from; i < len(d.requests); i++ {
			if d.requests[i].Method == method {
				found, idx = d.requests[i], i
				return true
			}
		}
		return false
	})
	if err != nil {
		return Request{}, -1, fmt.Errorf("fakedaemon: no %s request: %w", method, err)
	}
	return found, idx, nil
}

// Connections is how many connections were accepted so far.
func (d *Daemon) Connections() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.accepted
}

// OpenConnections is how many connections are open now.
func (d *Daemon) OpenConnections() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// Cancels returns the ids of every $/cancelRequest received, as raw JSON.
func (d *Daemon) Cancels() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.cancels...)
}

// WaitOpenConnections waits until exactly n connections are open.
func (d *Daemon) WaitOpenConnections(ctx context.Context, n int) error {
	err := d.waitFor(ctx, func() bool { return len(d.conns) == n })
	if err != nil {
		return fmt.Errorf("fakedaemon: open connections never became %d: %w", n, err)
	}
	return nil
}
