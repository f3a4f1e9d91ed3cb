package pluginkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// The connection's states, in order. They only move forward.
type state int32

const (
	stateAwaitInit state = iota // only initialize, $/ping, health/check and exit are served
	stateReady                  // steady state
	stateDraining               // shutdown, exit, EOF or SIGTERM seen: no new requests
)

type server struct {
	p       *Plugin
	log     *slog.Logger
	out     *frameWriter
	redact  *redactor
	peer    *Peer
	started time.Time

	mu       sync.Mutex
	state    state
	calls    map[string]*call                // in-flight requests by id
	streams  map[string]map[*stream]struct{} // Stream work of answered requests, by id
	hostCaps HostCapabilities

	work     *workQueue
	inflight sync.WaitGroup // queued or running handlers
	tasks    sync.WaitGroup // Peer.Go background work
	replies  sync.WaitGroup // shutdown replies still to be written

	life      context.Context // ends when draining cancels streams
	stopLife  context.CancelFunc
	drainOnce sync.Once
	exit      chan struct{} // closed by the exit notification
	exitOnce  sync.Once
	closed    atomic.Bool
	lastError atomic.Pointer[string]
}

// call is one in-flight request.
type call struct {
	id        json.RawMessage
	method    string
	cancel    context.CancelFunc
	mu        sync.Mutex
	cancelled bool // by $/cancelRequest
	answered  bool
	after     []func()                // AfterReply hooks, run once a success is written
	streams   []func(context.Context) // Stream work, started once answered
}

// Serve speaks the protocol on in/out until the host sends exit, closes
// in, or ctx ends (SIGTERM in Main). Each of these drains the same way:
// new requests are refused, in-flight ones get DrainTimeout to finish,
// streams are cancelled, Close runs. Serve then returns nil; it returns an
// error only for a read failure other than EOF.
func Serve(ctx context.Context, p Plugin, in io.Reader, out io.Writer) error {
	s := newServer(&p, out)
	readDone := make(chan error, 1)
	go func() { readDone <- s.readLoop(in) }()

	var err error
	select {
	case <-ctx.Done():
		s.log.Info("signal received, draining")
	case <-s.exit:
	case err = <-readDone:
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
			err = nil
			s.log.Info("stdin closed, draining")
		}
	case <-s.out.failed:
		s.log.Warn("stdout write failed, host is gone")
	}
	s.drain()
	waitTimeout(&s.replies, 500*time.Millisecond)
	s.closed.Store(true)
	return err
}

func newServer(p *Plugin, out io.Writer) *server {
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if p.redact == nil {
		p.redact = newRedactor(p.Env)
	}
	workers := p.Concurrency
	if workers <= 0 {
		workers = 32
	}
	if p.Serial {
		workers = 1
	}
	s := &server{
		p:       p,
		log:     log,
		out:     newFrameWriter(out),
		redact:  p.redact,
		started: time.Now(),
		calls:   map[string]*call{},
		streams: map[string]map[*stream]struct{}{},
		work:    newWorkQueue(workers),
		exit:    make(chan struct{}),
	}
	s.life, s.stopLife = context.WithCancel(context.Background())
	s.peer = &Peer{s: s}
	return s
}

func (s *server) readLoop(in io.Reader) error {
	fr := newFrameReader(in, MaxFrameBytes)
	for {
		frame, err := fr.Next()
		var ferr *frameError
		switch {
		case errors.As(err, &ferr):
			s.parseError(ferr)
			continue
		case err != nil:
			return err
		}
		if stop := s.handleFrame(frame); stop {
			return nil
		}
	}
}

// parseError answers -32700 with id null. Before initialize it only logs:
// the official testkit takes the first frame with an id key as the
// initialize reply, so an early id:null frame would fail its handshake
// (host-and-lifecycle §2.2, §13).
func (s *server) parseError(ferr *frameError) {
	s.log.Warn("dropped unparseable frame", "reason", ferr.reason)
	if s.currentState() == stateAwaitInit {
		return
	}
	s.writeFrame(errorFrame(nil, ErrorObject{
		Code: CodeParseError, Message: ferr.Error(),
		Data: map[string]any{"category": CategoryParseError},
	}))
}

// handleFrame routes one frame. It reports true when reading should stop.
func (s *server) handleFrame(frame []byte) bool {
	in, envErr := decodeInbound(frame)
	if envErr != nil {
		s.log.Warn("invalid frame", "reason", envErr.msg)
		s.writeFrame(errorFrame(envErr.id, ErrorObject{
			Code: CodeInvalidRequest, Message: envErr.msg,
			Data: map[string]any{"category": CategoryProtocol},
		}))
		return false
	}
	if in.Method == nil {
		s.log.Warn("dropped a response frame: this plugin sends no requests", "id", string(in.ID))
		return false
	}
	if !in.hasID {
		return s.handleNotification(in)
	}
	s.handleRequest(in)
	return false
}

func (s *server) handleNotification(in *inbound) bool {
	switch in.method {
	case "exit":
		s.exitOnce.Do(func() { close(s.exit) })
		return true
	case "initialized":
		return false
	case "$/cancelRequest":
		s.cancelRequest(in.Params)
		return false
	}
	r := s.p.Mux.lookup(in.method)
	if r == nil || r.notify == nil || s.currentState() != stateReady {
		// Unknown notifications, $/… or not, are ignored: they never get
		// a response (spec §2.2).
		s.log.Debug("ignored notification", "method", in.method)
		return false
	}
	params := []byte(in.Params)
	s.inflight.Add(1)
	if !s.work.push(func() {
		defer s.inflight.Done()
		defer s.recoverPanic(in.method, nil)
		r.notify(s.handlerContext(s.life, nil), params)
	}) {
		s.inflight.Done()
	}
	return false
}

func (s *server) handleRequest(in *inbound) {
	id := json.RawMessage(in.ID)
	switch in.method {
	case "initialize":
		s.initialize(id, in.Params)
		return
	case "$/ping":
		s.reply(id, struct{}{})
		return
	case "health/check":
		go s.healthCheck(id)
		return
	case "shutdown":
		s.shutdown(id)
		return
	}

	switch s.currentState() {
	case stateAwaitInit:
		s.fail(id, Errorf(CategoryNotInitialized, "plugin not initialized: %s received before initialize", in.method))
		return
	case stateDraining:
		s.fail(id, Errorf(CategoryProtocol, "plugin is shutting down: %s refused", in.method))
		return
	}

	r := s.p.Mux.lookup(in.method)
	if r == nil || r.request == nil {
		s.fail(id, s.unknownMethod(in.method))
		return
	}
	s.dispatch(id, in.method, r, []byte(in.Params))
}

// unknownMethod distinguishes a method of this plugin's kind that it does
// not implement (-32001, the host falls back) from one that does not exist
// for it at all (-32601).
func (s *server) unknownMethod(method string) *Error {
	for _, m := range kindMethods[s.p.Kind] {
		if m == method {
			return Errorf(CategoryNotSupported, "method %q is not supported by %s", method, s.p.Name)
		}
	}
	return Errorf(CategoryMethodNotFound, "method %q not found", method)
}

func (s *server) dispatch(id json.RawMessage, method string, r *route, params []byte) {
	ctx, cancel := context.WithCancel(s.life)
	c := &call{id: id, method: method, cancel: cancel}
	key := string(id)
	s.mu.Lock()
	if _, dup := s.calls[key]; dup {
		s.mu.Unlock()
		cancel()
		s.fail(id, Errorf(CategoryProtocol, "request id %s is already in flight", key))
		return
	}
	s.calls[key] = c
	s.mu.Unlock()

	s.inflight.Add(1)
	job := func() {
		defer s.inflight.Done()
		defer cancel()
		defer s.recoverPanic(method, c)
		if ctx.Err() != nil { // cancelled while queued
			s.answer(c, nil, ctx.Err())
			return
		}
		result, err := r.request(context.WithValue(s.handlerContext(ctx, id), callKey, c), params)
		s.answer(c, result, err)
	}
	if !s.work.push(job) {
		s.inflight.Done()
		s.answer(c, nil, Errorf(CategoryProtocol, "plugin is shutting down: %s refused", method))
	}
}

func (s *server) handlerContext(ctx context.Context, id json.RawMessage) context.Context {
	ctx = context.WithValue(ctx, peerKey, s.peer)
	if id != nil {
		ctx = context.WithValue(ctx, requestIDKey, id)
	}
	return ctx
}

// answer writes the one response of a call. A call cancelled by the host is
// answered -32002 whatever the handler returned.
func (s *server) answer(c *call, result any, err error) {
	c.mu.Lock()
	if c.answered {
		c.mu.Unlock()
		return
	}
	c.answered = true
	cancelled, after, streams := c.cancelled, c.after, c.streams
	c.after, c.streams = nil, nil
	c.mu.Unlock()

	s.mu.Lock()
	delete(s.calls, string(c.id))
	s.mu.Unlock()

	switch {
	case cancelled:
		s.fail(c.id, Errorf(CategoryCancelled, "request cancelled"))
		s.startStreams(c.id, streams, false)
	case err != nil:
		s.failCall(c.method, c.id, err)
		s.startStreams(c.id, streams, false)
	default:
		s.reply(c.id, result)
		for _, fn := range after {
			fn()
		}
		s.startStreams(c.id, streams, true)
	}
}

// cancelRequest handles $/cancelRequest {id}: the request's context is
// cancelled and it is answered -32002 at once, without waiting for the
// handler to notice.
func (s *server) cancelRequest(params []byte) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil || p.ID == nil {
		s.log.Warn("ignored $/cancelRequest without an id")
		return
	}
	s.mu.Lock()
	c := s.calls[string(p.ID)]
	s.mu.Unlock()
	if c == nil {
		// Already answered: what is left to cancel is its stream, if any.
		if !s.cancelStreams(p.ID) {
			s.log.Debug("ignored $/cancelRequest for an id with nothing in flight", "id", string(p.ID))
		}
		return
	}
	c.mu.Lock()
	if !c.answered {
		c.cancelled = true
	}
	c.mu.Unlock()
	c.cancel()
	s.answer(c, nil, nil)
}

func (s *server) recoverPanic(method string, c *call) {
	v := recover()
	if v == nil {
		return
	}
	s.log.Error("handler panic", "method", method, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	s.recordError(fmt.Errorf("%s: panic: %v", method, v))
	if c != nil {
		s.answer(c, nil, Errorf(CategoryInternal, "internal error"))
	}
}

// reply sends a result. A result that cannot be encoded becomes -32603.
func (s *server) reply(id json.RawMessage, result any) {
	frame, err := responseFrame(id, result)
	if err != nil {
		s.failCall("", id, err)
		return
	}
	s.writeFrame(frame)
}

// fail sends an error built by pluginkit itself.
func (s *server) fail(id json.RawMessage, e *Error) { s.failCall("", id, e) }

// failCall sends the error a handler returned, as toWire decides, and
// records internal ones for health/check.
func (s *server) failCall(method string, id json.RawMessage, err error) {
	we, internal := toWire(err, s.redact.scrub)
	if internal {
		s.log.Error("request failed", "method", method, "error", err)
		s.recordError(fmt.Errorf("%s: %w", method, err))
	}
	s.writeFrame(errorFrame(id, we))
}

func (s *server) writeFrame(frame []byte) {
	if err := s.out.write(frame); err != nil {
		s.log.Debug("write failed", "error", err)
	}
}

func (s *server) currentState() state {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

func (s *server) recordError(err error) {
	msg := s.redact.summary(err.Error())
	s.lastError.Store(&msg)
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
