package inbound

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Delivery is one Events API event_callback as Slack sent it.
type Delivery struct {
	Payload     json.RawMessage
	Transport   string // "socket" or "http"
	Retry       int    // Slack's retry_attempt or X-Slack-Retry-Num
	RetryReason string
	Received    time.Time
}

// Sink takes a delivery. It may block to apply backpressure; it returns
// an error only when ctx ended first.
type Sink func(ctx context.Context, d Delivery) error

// Phase is where a transport stands.
type Phase int

// The phases. Connecting and Reconnecting read as degraded in health,
// AuthFailed and Failed as unhealthy, Connected and Listening as healthy.
const (
	PhaseIdle Phase = iota
	PhaseConnecting
	PhaseConnected
	PhaseReconnecting
	PhaseAuthFailed
	PhaseListening
	PhaseFailed
	PhaseStopped
)

var phaseNames = [...]string{"idle", "connecting", "connected", "reconnecting", "auth_failed", "listening", "failed", "stopped"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "unknown"
}

// Status is a transport's state, safe for concurrent use.
type Status struct {
	mu          sync.Mutex
	phase       Phase
	lastErr     string
	connections int
}

// Snapshot is one consistent read of a Status.
type Snapshot struct {
	Phase       Phase
	LastError   string
	Connections int // websocket connections opened so far
}

// Get returns the current state.
func (s *Status) Get() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Snapshot{Phase: s.phase, LastError: s.lastErr, Connections: s.connections}
}

// Set moves to phase p with lastErr as the reason ("" for none).
func (s *Status) Set(p Phase, lastErr string) {
	s.mu.Lock()
	s.phase, s.lastErr = p, lastErr
	s.mu.Unlock()
}

// Connecting records an (re)connection attempt: the first ever is
// "connecting", any later one "reconnecting", keeping the last error.
func (s *Status) Connecting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase == PhaseAuthFailed {
		return // still failed until a connection succeeds
	}
	if s.connections == 0 && s.phase != PhaseReconnecting {
		s.phase = PhaseConnecting
		return
	}
	s.phase = PhaseReconnecting
}

// Connected records an open connection and clears the last error.
func (s *Status) Connected() {
	s.mu.Lock()
	s.phase, s.lastErr = PhaseConnected, ""
	s.connections++
	s.mu.Unlock()
}
