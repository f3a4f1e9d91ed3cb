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
	"time"
)

type server struct {
	p       *Plugin
	log     *slog.Logger
	out     *frameWriter
	redact  *redactor
	peer    *Peer
	started time.Time
	work    *workQueue

	// life is the parent of every handler's, stream's and task's context;
	// drain cancels it once in-flight requests had their grace.
	life     context.Context
	stopLife context.CancelFunc

	mu       sync.Mutex    // guards inFlight and changed; see updateInFlight
	inFlight inFlightState //
	changed  chan struct{} // closed on the next update, for waitInFlight

	exit    chan struct{} // closed by the exit notification
	drained chan struct{} // closed when drain is done
}

// Serve speaks the protocol on in/out until the host sends exit, closes
// in, or ctx ends (SIGTERM in Main). Each of these drains the same way
// (see drainBudget): new requests are refused, in-flight ones get a grace
// to finish, then everything is cancelled and Close runs. Serve then
// returns nil; it returns an error only for a read failure other than EOF.
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
	s.waitInFlight(replyFlush, func(st *inFlightState) bool { return st.replies == 0 })
	s.updateInFlight(func(st *inFlightState) { st.state = stateClosed })
	return err
}

func newServer(p *Plugin, out io.Writer) *server {
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if p.redact == nil {
		p.redact = newRedactor(p.Env, p.Secrets)
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
		work:    newWorkQueue(workers),
		exit:    make(chan struct{}),
		drained: make(chan struct{}),
		inFlight: inFlightState{
			calls:   map[string]*call{},
			streams: map[string]map[*stream]struct{}{},
		},
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

// parseError answers -32700 with id null, once the gate allows it.
func (s *server) parseError(ferr *frameError) {
	s.log.Warn("dropped unparseable frame", "reason", ferr.reason)
	answer := false
	s.readInFlight(func(st *inFlightState) { answer = st.answersParseErrors() })
	if answer {
		s.fail(nil, Errorf(CategoryParseError, "%s", ferr.Error()))
	}
}

// handleFrame routes one frame. It reports true when reading should stop.
func (s *server) handleFrame(frame []byte) bool {
	in, envErr := decodeInbound(frame)
	if envErr != nil {
		s.log.Warn("invalid frame", "reason", envErr.msg)
		s.fail(envErr.id, Errorf(CategoryProtocol, "%s", envErr.msg))
		return false
	}
	if in.Method == nil {
		s.log.Warn("dropped a response frame: this plugin sends no requests", "id", string(in.ID))
		return false
	}
	b, isBuiltin := builtins[in.method]
	switch {
	case !in.hasID && isBuiltin && b.notify != nil:
		return b.notify(s, in.Params)
	case !in.hasID:
		s.handleNotification(in.method, in.Params)
	case isBuiltin && b.request != nil:
		b.request(s, json.RawMessage(in.ID), in.Params)
	default:
		s.handleRequest(json.RawMessage(in.ID), in.method, in.Params)
	}
	return false
}

// handleNotification runs a plugin's notification handler. Unknown
// notifications, $/… or not, and any outside the steady state are
// ignored: a notification never gets a response (spec §2.2).
func (s *server) handleNotification(method string, params []byte) {
	r := s.p.Mux.lookup(method)
	admitted := false
	if r != nil && r.notify != nil {
		s.updateInFlight(func(st *inFlightState) {
			if admitted = st.admitNotification(); admitted {
				st.handlers++
			}
		})
	}
	if !admitted {
		s.log.Debug("ignored notification", "method", method)
		return
	}
	done := func() { s.updateInFlight(func(st *inFlightState) { st.handlers-- }) }
	if !s.work.push(func() {
		defer done()
		defer s.recoverPanic(method, nil)
		r.notify(s.handlerContext(s.life, nil), params)
	}) {
		done()
	}
}

// handleRequest admits a plugin method through the state's gate and
// queues its handler. Admission, the duplicate-id check and registering
// the call are one update, so a request can never slip in after draining
// began.
func (s *server) handleRequest(id json.RawMessage, method string, params []byte) {
	r := s.p.Mux.lookup(method)
	ctx, cancel := context.WithCancel(s.life)
	c := &call{id: id, method: method, cancel: cancel}
	var refusal *Error
	s.updateInFlight(func(st *inFlightState) {
		if refusal = st.admitRequest(method); refusal != nil {
			return
		}
		if r == nil || r.request == nil {
			refusal = s.unknownMethod(method)
			return
		}
		if _, dup := st.calls[string(id)]; dup {
			refusal = Errorf(CategoryProtocol, "request id %s is already in flight", id)
			return
		}
		st.calls[string(id)] = c
		st.handlers++
	})
	if refusal != nil {
		cancel()
		s.fail(id, refusal)
		return
	}
	leave := s.p.procs.enter() // counted from admission: queued calls overlap too
	done := func() {
		leave()
		s.updateInFlight(func(st *inFlightState) { st.handlers-- })
	}
	job := func() {
		defer done()
		defer cancel()
		defer s.recoverPanic(method, c)
		if ctx.Err() != nil { // cancelled while queued
			s.answer(c, nil, ctx.Err())
			return
		}
		result, err := r.request(context.WithValue(s.handlerContext(ctx, id), callKey, c), params)
		// Counted out before the reply is written: the host may send its
		// next call the moment it reads this one's answer, and that call
		// must not look like an overlap.
		leave()
		s.answer(c, result, err)
	}
	if !s.work.push(job) {
		done()
		s.answer(c, nil, errShuttingDown(method))
	}
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

func (s *server) handlerContext(ctx context.Context, id json.RawMessage) context.Context {
	ctx = context.WithValue(ctx, peerKey, s.peer)
	if id != nil {
		ctx = context.WithValue(ctx, requestIDKey, id)
	}
	return ctx
}

// answer writes the one response of a call: the first caller decides it,
// later ones (a handler that returns after its cancellation was answered)
// are dropped. A call cancelled by the host is answered -32002 whatever the
// handler returned.
func (s *server) answer(c *call, result any, err error) {
	first, cancelled := false, false
	var streams []*stream
	s.updateInFlight(func(st *inFlightState) {
		if c.answered {
			return
		}
		first, cancelled = true, c.cancelled
		// A successful call's streams are findable by its id before the
		// ack is written, so a $/cancelRequest the host sends right after
		// the ack always finds them.
		streams = st.addStreams(s.life, c.id, c.streams, !cancelled && err == nil)
		c.answered, c.streams = true, nil
		delete(st.calls, string(c.id))
	})
	if !first {
		return
	}
	switch {
	case cancelled:
		s.fail(c.id, Errorf(CategoryCancelled, "request cancelled"))
	case err != nil:
		s.failCall(c.method, c.id, err)
	default:
		s.reply(c.id, result)
	}
	s.startStreams(c.id, streams)
}

// cancelRequest handles $/cancelRequest {id}: the request's context is
// cancelled and it is answered -32002 at once, without waiting for the
// handler to notice. For an answered request, its streams are cancelled.
func (s *server) cancelRequest(params []byte) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil || p.ID == nil {
		s.log.Warn("ignored $/cancelRequest without an id")
		return
	}
	var c *call
	streams := 0
	s.updateInFlight(func(st *inFlightState) {
		if c = st.calls[string(p.ID)]; c != nil {
			c.cancelled = true
			return
		}
		for stream := range st.streams[string(p.ID)] {
			stream.cancel() // only cancels a context: safe under the lock
			streams++
		}
	})
	switch {
	case c != nil:
		c.cancel()
		s.answer(c, nil, nil)
	case streams == 0:
		s.log.Debug("ignored $/cancelRequest for an id with nothing in flight", "id", string(p.ID))
	}
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

// failCall sends err as toWire decides, and records internal ones for
// health/check. Every error object pluginkit writes comes through here.
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
