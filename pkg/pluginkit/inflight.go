package pluginkit

import (
	"context"
	"encoding/json"
	"time"
)

// inFlightState is everything about a connection that changes while it
// serves: the lifecycle state, the requests and streams in flight, and the
// counts drain waits on. It is read and changed only inside
// server.updateInFlight, under one lock, and every change wakes whoever
// waits for a condition on it (waitInFlight). One state changed in one
// function is what lets drain reason about "nothing is running" without
// racing the reader, the workers and the streams.
type inFlightState struct {
	state    state
	hostCaps HostCapabilities

	calls   map[string]*call                // requests read and not yet answered, by id
	streams map[string]map[*stream]struct{} // running streams of answered requests, by id

	handlers int // request and notification handlers queued or running
	tasks    int // Peer.Go tasks and streams running
	replies  int // shutdown replies still to be written

	drainStarted bool
	exitSeen     bool

	lastError string // redacted summary for health/check
}

// call is one request read from the host and not yet answered.
type call struct {
	id        json.RawMessage
	method    string
	cancel    context.CancelFunc
	cancelled bool                    // by $/cancelRequest
	answered  bool                    // its one response is decided
	streams   []func(context.Context) // Stream work, started once answered
}

// updateInFlight runs fn on the connection's state under its lock, then
// wakes every waitInFlight. fn must not block or call back into the server.
func (s *server) updateInFlight(fn func(st *inFlightState)) {
	s.mu.Lock()
	fn(&s.inFlight)
	changed := s.changed
	s.changed = nil // the next waiter makes a new one
	s.mu.Unlock()
	if changed != nil {
		close(changed)
	}
}

// readInFlight runs fn on the state under the lock, for a read only.
func (s *server) readInFlight(fn func(st *inFlightState)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.inFlight)
}

// waitInFlight waits up to d for cond to hold. It reports whether it did.
func (s *server) waitInFlight(d time.Duration, cond func(st *inFlightState) bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.mu.Lock()
		ok := cond(&s.inFlight)
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		}
	}
}

func (s *server) currentState() state {
	var st state
	s.readInFlight(func(f *inFlightState) { st = f.state })
	return st
}

func (s *server) hostCapabilities() HostCapabilities {
	var caps HostCapabilities
	s.readInFlight(func(f *inFlightState) { caps = f.hostCaps })
	return caps
}

// runTask runs fn on its own goroutine, counted in tasks so that drain
// waits for it (bounded by the shutdown budget).
func (s *server) runTask(ctx context.Context, fn func(ctx context.Context), done func()) {
	s.updateInFlight(func(st *inFlightState) { st.tasks++ })
	go func() {
		defer s.updateInFlight(func(st *inFlightState) { st.tasks-- })
		if done != nil {
			defer done()
		}
		fn(ctx)
	}()
}

func (s *server) recordError(err error) {
	msg := s.redact.summary(err.Error())
	s.updateInFlight(func(st *inFlightState) { st.lastError = msg })
}
