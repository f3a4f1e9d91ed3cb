package pluginkit

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The connection's states, in order. They only move forward.
type state int32

const (
	stateAwaitInit state = iota // only the built-ins are served
	stateReady                  // steady state
	stateDraining               // shutdown, exit, EOF or SIGTERM seen: no new requests
	stateClosed                 // Serve returned: nothing more is written
)

// The lifecycle's time limits. The daemon waits 2 s for the shutdown reply
// (and for $/ping and health/check), then kills the process
// (host-and-lifecycle §8). pluginkit promises the reply within
// shutdownReplyBy, 500 ms inside that, whatever handlers, tasks and Close
// do. It gets there in three phases that add up to drainBudget, which
// leaves shutdownReplyBy-drainBudget for writing the reply on a loaded
// machine:
//
//	drainGrace   1000 ms  in-flight requests finish on their own
//	cancelGrace   150 ms  their contexts, every stream's and every task's
//	                      are cancelled; what still runs is answered -32002
//	                      and abandoned (logged, never waited for again)
//	Close        ≥150 ms  whatever is left of drainBudget; a Close still
//	                      running then is abandoned too
//
// stdin EOF, exit and SIGTERM drain the same way; with nothing in flight
// each phase ends at once, so an idle plugin stops in milliseconds.
const (
	shutdownReplyBy = 1500 * time.Millisecond
	drainBudget     = 1300 * time.Millisecond
	drainGrace      = 1000 * time.Millisecond
	cancelGrace     = 150 * time.Millisecond
	// replyFlush bounds how long Serve, once drained, waits for a shutdown
	// reply still being written.
	replyFlush = 500 * time.Millisecond
	// healthBudget bounds the plugin's Health hook: the daemon's 2 s
	// health/check timeout less the same margin.
	healthBudget = 1500 * time.Millisecond
)

// builtin is a method pluginkit serves for every plugin, in every state:
// a request handler, a notification handler, or both. This table is the
// one list of reserved names: Mux refuses to register them.
type builtin struct {
	request func(s *server, id json.RawMessage, params []byte)
	notify  func(s *server, params []byte) (stopReading bool)
}

var builtins = map[string]builtin{
	"initialize":      {request: (*server).initialize},
	"$/ping":          {request: func(s *server, id json.RawMessage, _ []byte) { s.reply(id, struct{}{}) }},
	"health/check":    {request: func(s *server, id json.RawMessage, _ []byte) { go s.healthCheck(id) }},
	"shutdown":        {request: func(s *server, id json.RawMessage, _ []byte) { s.shutdown(id) }},
	"initialized":     {notify: func(*server, []byte) bool { return false }},
	"exit":            {notify: func(s *server, _ []byte) bool { s.requestExit(); return true }},
	"$/cancelRequest": {notify: func(s *server, params []byte) bool { s.cancelRequest(params); return false }},
}

// isReserved reports whether method belongs to pluginkit, not to a plugin.
func isReserved(method string) bool {
	_, ok := builtins[method]
	return ok || method == "" || strings.HasPrefix(method, "$/")
}

// kindMethods are the domain methods of each plugin kind (spec §5). A
// plugin asked for one of its own kind's methods that it did not register
// answers -32001 so the host can fall back; anything else is -32601.
var kindMethods = map[string][]string{
	"provider":            {"agent/run", "agent/resume", "agent/cancel"},
	"subject_backend":     {"subject/list", "subject/get", "subject/update", "subject/delete", "subject/watch", "subject/unwatch", "subject/schema"},
	"trigger_backend":     {"trigger/watch", "trigger/ack", "trigger/schema"},
	"log_storage_backend": {"log_storage/store", "log_storage/query", "log_storage/tail", "log_storage/schema"},
	"transport_backend":   {"transport/start", "transport/shutdown", "transport/schema"},
	"workflow_runner":     {"workflow/execute", "workflow/run_phase"},
	"queue": {"queue/enqueue", "queue/list", "queue/lease", "queue/stats", "queue/hold", "queue/release",
		"queue/release_pending", "queue/drop", "queue/reorder", "queue/mark_assigned", "queue/completion",
		"queue/next_deadline", "queue/v2/enqueue", "queue/v2/lease", "queue/v2/lease/renew", "queue/v2/lease/recover", "queue/v2/completion", "queue/v2/release_pending"},
	"durable_store": {"durable/begin_workflow_run", "durable/begin_step", "durable/commit_step",
		"durable/abandon_step", "durable/recover_in_flight", "durable/query_run"},
	"memory_store": {"memory/put", "memory/get", "memory/query", "memory/list_scopes", "memory/delete_scope"},
	"notifier":     {"notifier/notify", "notifier/flush", "notifier/schema"},
}

// The gates: what each state lets through besides the built-ins.

// admitRequest decides whether a plugin method may run now; nil means yes.
func (st *inFlightState) admitRequest(method string) *Error {
	switch st.state {
	case stateAwaitInit:
		return Errorf(CategoryNotInitialized, "plugin not initialized: %s received before initialize", method)
	case stateReady:
		return nil
	}
	return errShuttingDown(method)
}

// errShuttingDown is the one refusal of a request that arrives, or was
// still queued, once draining began.
func errShuttingDown(method string) *Error {
	return Errorf(CategoryProtocol, "plugin is shutting down: %s refused", method)
}

// admitNotification reports whether a plugin's notification handler may
// run: only in the steady state. Others are dropped, never answered.
func (st *inFlightState) admitNotification() bool { return st.state == stateReady }

// answersParseErrors reports whether a -32700 is sent. Before initialize
// it is only logged: the official testkit takes the first frame with an id
// key as the initialize reply, so an early id:null frame would fail its
// handshake (host-and-lifecycle §2.2, §13).
func (st *inFlightState) answersParseErrors() bool { return st.state != stateAwaitInit }

// initialize handles the handshake request. It runs on the reader
// goroutine: nothing else may happen before it, and the reply must be on
// the wire before the host's next frame is read.
func (s *server) initialize(id json.RawMessage, raw []byte) {
	if st := s.currentState(); st != stateAwaitInit {
		s.fail(id, Errorf(CategoryProtocol, "initialize received twice"))
		return
	}
	params, err := decodeParams[InitializeParams]("initialize", raw)
	if err != nil {
		s.failCall("initialize", id, err)
		return
	}
	if params.ProtocolVersion == "" {
		s.fail(id, InvalidParams("invalid params: field %q is required", "protocol_version"))
		return
	}
	if major, ok := majorOf(params.ProtocolVersion); !ok || major != 1 {
		s.fail(id, Errorf(CategoryProtocol,
			"incompatible protocol version: host speaks %s, plugin speaks %s (major 1)",
			params.ProtocolVersion, ProtocolVersion).
			WithData("host_version", params.ProtocolVersion).
			WithData("plugin_version", ProtocolVersion))
		return
	}
	s.updateInFlight(func(st *inFlightState) { st.hostCaps = params.Capabilities })
	if s.p.signalsInstalled != nil {
		<-s.p.signalsInstalled
	}
	if s.p.Init != nil {
		if err := s.p.Init(s.handlerContext(s.life, nil), s.peer, params); err != nil {
			s.failCall("initialize", id, err)
			return
		}
	}
	s.updateInFlight(func(st *inFlightState) {
		if st.state == stateAwaitInit {
			st.state = stateReady
		}
	})
	s.log.Debug("initialized", "host", params.HostInfo.Name, "host_version", params.HostInfo.Version,
		"protocol", params.ProtocolVersion)
	s.reply(id, s.p.initializeResult())
}

func majorOf(version string) (int, bool) {
	head, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	n, err := strconv.Atoi(head)
	return n, err == nil && n >= 0
}

// shutdown refuses new requests at once, then drains on its own goroutine
// so that $/ping, $/cancelRequest and exit are still read meanwhile. It is
// idempotent: a second shutdown is answered when the first drain is done.
func (s *server) shutdown(id json.RawMessage) {
	s.updateInFlight(func(st *inFlightState) {
		st.state = max(st.state, stateDraining)
		st.replies++
	})
	go func() {
		defer s.updateInFlight(func(st *inFlightState) { st.replies-- })
		s.drain()
		s.reply(id, struct{}{})
	}()
}

// requestExit records the exit notification; Serve drains and returns.
func (s *server) requestExit() {
	s.updateInFlight(func(st *inFlightState) {
		if !st.exitSeen {
			st.exitSeen = true
			close(s.exit)
		}
	})
}

// drain is the one way the plugin stops, whatever asked for it, in the
// phases described at drainBudget. It runs once; concurrent callers wait
// for the first to finish, which is never later than drainBudget.
func (s *server) drain() {
	first := false
	s.updateInFlight(func(st *inFlightState) {
		st.state = max(st.state, stateDraining)
		first, st.drainStarted = !st.drainStarted, true
	})
	if !first {
		<-s.drained
		return
	}
	defer close(s.drained)
	start := time.Now()
	deadline := start.Add(drainBudget)

	if !s.waitInFlight(drainGrace, func(st *inFlightState) bool { return st.handlers == 0 }) {
		s.log.Warn("in-flight requests did not finish in time; cancelling them", "grace", drainGrace)
	}
	s.stopLife()
	if !s.waitInFlight(cancelGrace, func(st *inFlightState) bool { return st.handlers == 0 && st.tasks == 0 }) {
		s.abandonInFlight()
	}
	s.work.close()
	s.closePlugin(deadline)
	s.log.Debug("drained", "elapsed", time.Since(start))
}

// abandonInFlight answers every request whose handler ignored its
// cancelled context (-32002, so the host is not left waiting) and logs
// what is left running. Nothing waits for it any more; the process may
// exit under it.
func (s *server) abandonInFlight() {
	var calls []*call
	var handlers, tasks int
	s.readInFlight(func(st *inFlightState) {
		handlers, tasks = st.handlers, st.tasks
		for _, c := range st.calls {
			calls = append(calls, c)
		}
	})
	for _, c := range calls {
		s.answer(c, nil, context.Canceled)
	}
	s.log.Warn("abandoned work that ignored its cancelled context", "handlers", handlers, "tasks", tasks,
		"budget", drainBudget)
}

// closePlugin runs the plugin's Close hook with what is left of the
// budget, and abandons it (logged) if it runs past the deadline.
func (s *server) closePlugin(deadline time.Time) {
	if s.p.Close == nil {
		return
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.p.Close(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			s.log.Error("close failed", "error", err)
		}
	case <-ctx.Done():
		s.log.Warn("Close did not return within the shutdown budget; abandoned", "budget", drainBudget)
	}
}
