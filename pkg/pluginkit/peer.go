package pluginkit

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
)

// ErrClosed is returned by Peer.Notify once the connection has ended.
var ErrClosed = errors.New("pluginkit: connection closed")

// Peer is the plugin's handle on the host: it sends notifications
// (trigger/event, subject/changed, log_storage/event, …) and runs
// background work that lives until the plugin drains. It is safe for use
// from many goroutines; each notification is one frame, and notifications
// sent from one goroutine arrive in the order they were sent.
type Peer struct{ s *server }

// Notify sends a notification. params nil omits the params key.
func (p *Peer) Notify(method string, params any) error {
	frame, err := notificationFrame(method, params)
	if err != nil {
		return err
	}
	if p.s.currentState() == stateClosed {
		return ErrClosed
	}
	return p.s.out.write(frame)
}

// Go runs fn in the background, for work that lives as long as the plugin
// rather than one request (a poller, a connection). Its context ends when
// the plugin drains (shutdown, exit, EOF, SIGTERM); draining waits for fn
// to return, within its budget, and abandons it after.
func (p *Peer) Go(fn func(ctx context.Context)) { p.s.runTask(p.s.life, fn, nil) }

// Busy counts work a plugin serves outside its protocol calls (an HTTP
// request, for animus-transport-http) as in flight until done is first
// called, so that when such work overlaps the process runs on all its Ps;
// see procs. Call done before answering, as pluginkit does for its calls:
// a client that sends its next request on reading the answer must not
// look like an overlap.
func (p *Peer) Busy() (done func()) { return p.s.p.procs.enter() }

// Logger is the plugin's stderr logger.
func (p *Peer) Logger() *slog.Logger { return p.s.log }

// AddSecret registers a secret learnt at run time (a token named by the
// plugin's configuration rather than declared in Env): from now on it is
// replaced by RedactedMarker in logs, error messages and last_error.
func (p *Peer) AddSecret(value string) { p.s.redact.add(value) }

// Redact returns text with every registered secret (sensitive Env values
// and AddSecret's) replaced by RedactedMarker, for text a plugin stores or
// sends itself, such as a delivery's error.
func (p *Peer) Redact(text string) string { return p.s.redact.scrub(text) }

// ErrorObject is what the host would see had a handler returned err: the
// same code, data.category and redaction as an error response (the one
// function, toWire, decides both). A stream uses it for the error that ends
// it, e.g. log_storage/event {id, error}. An internal error is logged and
// recorded as last_error, as a failed request's would be.
func (p *Peer) ErrorObject(err error) ErrorObject {
	eo, internal := toWire(err, p.s.redact.scrub)
	if internal {
		p.s.log.Error("stream failed", "error", err)
		p.s.recordError(err)
	}
	return eo
}

// RecordError makes err the last_error that health/check reports. The text
// is redacted of secrets and file paths first.
func (p *Peer) RecordError(err error) { p.s.recordError(err) }

type ctxKey int

const (
	peerKey ctxKey = iota
	requestIDKey
	callKey
)

// PeerFrom returns the Peer of the connection a handler runs on.
func PeerFrom(ctx context.Context) *Peer {
	p, _ := ctx.Value(peerKey).(*Peer)
	return p
}

// RequestID returns the id of the request a handler serves, exactly as the
// host sent it (a subject/watch or log_storage/tail stream echoes it).
func RequestID(ctx context.Context) json.RawMessage {
	id, _ := ctx.Value(requestIDKey).(json.RawMessage)
	return id
}

// Progress sends $/progress {id, value} for the current request when the
// host declared progress support; otherwise it does nothing.
func Progress(ctx context.Context, value any) error {
	p := PeerFrom(ctx)
	id := RequestID(ctx)
	if p == nil || id == nil || !p.s.hostCapabilities().Progress {
		return nil
	}
	return p.Notify("$/progress", struct {
		ID    json.RawMessage `json:"id"`
		Value any             `json:"value"`
	}{id, value})
}

func loggerFrom(ctx context.Context) *slog.Logger {
	if p := PeerFrom(ctx); p != nil {
		return p.s.log
	}
	return slog.New(slog.DiscardHandler)
}
