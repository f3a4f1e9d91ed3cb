package example

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// HarnessSlow advertises the harness/slow method the conformance runner
// uses for its ping-while-busy, cancellation and drain scenarios.
const HarnessSlow = "$harness/slow"

// Env lists the variables the example reads.
var Env = []pluginkit.EnvVar{
	{Name: "EXAMPLE_GREETING", Description: "prefix echo adds to messages (default none)"},
	{Name: "EXAMPLE_TOKEN", Description: "a pretend secret, to show redaction in logs", Sensitive: true},
}

// Service is the plugin's state.
type Service struct {
	getenv   func(string) string
	greeting string
	streams  atomic.Int64
}

// New returns a Service reading its environment through getenv
// (os.Getenv in production); nothing is read until Init.
func New(getenv func(string) string) *Service { return &Service{getenv: getenv} }

// Register adds the handlers to mux.
func (s *Service) Register(mux *pluginkit.Mux) {
	pluginkit.Handle(mux, "example/echo", s.Echo)
	pluginkit.Handle(mux, "harness/slow", s.Slow)
	pluginkit.Handle(mux, "example/stream", s.Stream)
	pluginkit.Handle(mux, "example/digest", s.Digest)
	pluginkit.Handle(mux, "example/fail", s.Fail)
}

// Init reads configuration.
func (s *Service) Init(ctx context.Context, peer *pluginkit.Peer, p pluginkit.InitializeParams) error {
	s.greeting = s.getenv("EXAMPLE_GREETING")
	return nil
}

// Health is always healthy: the example has no backend.
func (s *Service) Health(ctx context.Context) pluginkit.HealthReport {
	return pluginkit.HealthReport{Status: pluginkit.Healthy}
}

// EchoParams is example/echo's input and output.
type EchoParams struct {
	Message string          `json:"message"`
	Extra   json.RawMessage `json:"extra,omitempty"`
}

// Echo returns its params, with the configured greeting prepended.
func (s *Service) Echo(ctx context.Context, p EchoParams) (EchoParams, error) {
	p.Message = s.greeting + p.Message
	return p, nil
}

// DigestResult is example/digest's output.
type DigestResult struct {
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Digest summarises a message without sending it back: the shape of a
// handler that takes a large payload (a queue dispatch, a subject patch)
// and answers small.
func (s *Service) Digest(ctx context.Context, p EchoParams) (DigestResult, error) {
	// Hash through one small buffer: converting the whole string (or each
	// slice of it) to []byte would allocate the payload a second time.
	h, buf := sha256.New(), make([]byte, 64<<10)
	for msg := p.Message; len(msg) > 0; {
		n := copy(buf, msg)
		h.Write(buf[:n])
		msg = msg[n:]
	}
	return DigestResult{Bytes: len(p.Message), SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// SlowParams is harness/slow's input.
type SlowParams struct {
	MS int `json:"ms"`
}

// Validate rejects negative or absurd durations.
func (p SlowParams) Validate() error {
	if p.MS < 0 || p.MS > 600_000 {
		return pluginkit.InvalidParams("invalid params: field \"ms\" must be between 0 and 600000")
	}
	return nil
}

// Slow sleeps for ms milliseconds, reporting progress, and stops early
// when the host cancels it.
func (s *Service) Slow(ctx context.Context, p SlowParams) (map[string]int, error) {
	_ = pluginkit.Progress(ctx, map[string]any{"message": "sleeping", "ms": p.MS})
	select {
	case <-time.After(time.Duration(p.MS) * time.Millisecond):
		return map[string]int{"slept_ms": p.MS}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// StreamParams is example/stream's input.
type StreamParams struct {
	Count      int `json:"count"`
	IntervalMS int `json:"interval_ms"`
}

// Stream acknowledges at once, then sends Count example/tick notifications
// carrying the request id, like subject/watch or log_storage/tail do.
func (s *Service) Stream(ctx context.Context, p StreamParams) (map[string]bool, error) {
	if p.Count < 0 {
		return nil, pluginkit.InvalidParams("invalid params: field \"count\" must not be negative")
	}
	peer, id := pluginkit.PeerFrom(ctx), pluginkit.RequestID(ctx)
	s.streams.Add(1)
	peer.Go(func(ctx context.Context) {
		defer s.streams.Add(-1)
		for seq := range p.Count {
			if p.IntervalMS > 0 {
				select {
				case <-time.After(time.Duration(p.IntervalMS) * time.Millisecond):
				case <-ctx.Done():
					return
				}
			} else if ctx.Err() != nil {
				return
			}
			if err := peer.Notify("example/tick", map[string]any{"id": id, "seq": seq}); err != nil {
				return
			}
		}
	})
	return map[string]bool{"streaming": true}, nil
}

// FailParams is example/fail's input.
type FailParams struct {
	Category string `json:"category"`
	Message  string `json:"message"`
}

// Fail returns an error of the requested category, to show the table.
func (s *Service) Fail(ctx context.Context, p FailParams) (any, error) {
	if p.Category == "" {
		return nil, pluginkit.InvalidParams("invalid params: field \"category\" is required")
	}
	if p.Category == "panic" {
		panic(p.Message)
	}
	return nil, pluginkit.Errorf(pluginkit.Category(p.Category), "%s", p.Message)
}
