package pluginkit

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// initialize handles the handshake request. It runs on the reader
// goroutine: nothing else may happen before it, and the reply must be on
// the wire before the host's next frame is read.
func (s *server) initialize(id json.RawMessage, raw []byte) {
	if st := s.currentState(); st != stateAwaitInit {
		s.fail(id, Errorf(CategoryProtocol, "initialize received twice"))
		return
	}
	params, err := decodeParams[InitializeParams](raw)
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
	s.mu.Lock()
	s.hostCaps = params.Capabilities
	s.mu.Unlock()

	if s.p.Init != nil {
		if err := s.p.Init(s.handlerContext(s.life, nil), s.peer, params); err != nil {
			s.failCall("initialize", id, err)
			return
		}
	}
	s.mu.Lock()
	if s.state == stateAwaitInit {
		s.state = stateReady
	}
	s.mu.Unlock()
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
	s.mu.Lock()
	s.state = stateDraining
	s.mu.Unlock()
	s.replies.Add(1)
	go func() {
		defer s.replies.Done()
		s.drain()
		s.reply(id, struct{}{})
	}()
}

// drain is the one way the plugin stops, whatever asked for it: refuse new
// requests, give in-flight ones DrainTimeout, cancel what is left and every
// stream, wait briefly for them, then run Close. It runs once; concurrent
// callers wait for it.
func (s *server) drain() {
	s.drainOnce.Do(func() {
		start := time.Now()
		s.mu.Lock()
		s.state = stateDraining
		s.mu.Unlock()

		timeout := s.p.DrainTimeout
		if timeout <= 0 {
			timeout = 1500 * time.Millisecond
		}
		if !waitTimeout(&s.inflight, timeout) {
			s.log.Warn("in-flight requests did not finish in time; cancelling them", "timeout", timeout)
		}
		s.stopLife()
		waitTimeout(&s.inflight, 200*time.Millisecond)
		if !waitTimeout(&s.tasks, 300*time.Millisecond) {
			s.log.Warn("background tasks did not stop in time")
		}
		s.work.close()
		if s.p.Close != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if err := s.p.Close(ctx); err != nil {
				s.log.Error("close failed", "error", err)
			}
			cancel()
		}
		s.log.Debug("drained", "elapsed", time.Since(start))
	})
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
		"queue/next_deadline"},
	"durable_store": {"durable/begin_workflow_run", "durable/begin_step", "durable/commit_step",
		"durable/abandon_step", "durable/recover_in_flight", "durable/query_run"},
	"memory_store": {"memory/put", "memory/get", "memory/query", "memory/list_scopes", "memory/delete_scope"},
	"notifier":     {"notifier/notify", "notifier/flush", "notifier/schema"},
}
