package control

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// eventBuffer is how many notifications a subscription holds before the
// reader waits for the consumer. On its own connection that wait is the
// backpressure we want; before the ack the buffer must absorb the burst the
// daemon may send first (daemon/logs history is at most 200 entries).
const eventBuffer = 512

// Event is one stream notification: its method (daemon/event, daemon/log,
// workflow/event, subject/changed) and params.data.
type Event struct {
	Method string
	Data   json.RawMessage
}

// Subscription is one control stream on a connection of its own.
type Subscription struct {
	conn   *conn
	id     int64
	method string
	events chan Event
	stop   chan struct{} // closed by Close: the consumer is gone
	acked  atomic.Bool

	endOnce sync.Once
	mu      sync.Mutex
	reason  string // subscription/closed's reason
	err     error  // set when the connection died instead
	dropped int
	closing sync.Once
}

// Subscribe opens a stream: it dials a connection for this stream alone,
// registers the subscription, sends the request and waits for the ack. An
// error reply (for example workflow/events without a broadcaster) is
// returned as *RPCError and no stream exists.
func Subscribe(ctx context.Context, path, method string, params any) (*Subscription, error) {
	c, err := dial(ctx, path)
	if err != nil {
		return nil, err
	}
	s := &Subscription{conn: c, method: method, events: make(chan Event, eventBuffer), stop: make(chan struct{})}
	id, ch, err := c.register(s)
	if err != nil {
		c.kill(ErrClosed)
		return nil, err
	}
	if err := c.send(id, method, params); err != nil {
		c.kill(ErrClosed)
		return nil, ErrConnectionLost
	}
	select {
	case r := <-ch:
		if r.err != nil {
			c.kill(ErrClosed)
			return nil, r.err
		}
		return s, nil
	case <-ctx.Done():
		c.kill(ErrClosed)
		return nil, ctx.Err()
	}
}

// Events delivers the stream's notifications in order. It is closed when
// the stream ends: see Reason and Err.
func (s *Subscription) Events() <-chan Event { return s.events }

// Method is the control method that opened the stream.
func (s *Subscription) Method() string { return s.method }

// Reason is subscription/closed's reason once the daemon ended the stream.
func (s *Subscription) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// Err is non-nil when the stream ended because the connection did.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Dropped counts notifications lost because they arrived before the ack
// faster than the buffer could hold them.
func (s *Subscription) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Close cancels the stream: $/cancelRequest with the request id exactly as
// it was issued, then the socket is closed (the authoritative cancel). It
// is idempotent.
func (s *Subscription) Close() {
	s.closing.Do(func() {
		close(s.stop)
		if s.conn.alive() {
			_ = s.conn.notify("$/cancelRequest", map[string]int64{"id": s.id})
		}
		s.conn.kill(ErrClosed)
	})
}

// push runs on the reader goroutine.
func (s *Subscription) push(e Event) {
	if !s.acked.Load() {
		select {
		case s.events <- e:
		default:
			s.mu.Lock()
			s.dropped++
			s.mu.Unlock()
		}
		return
	}
	select {
	case s.events <- e:
	case <-s.stop:
	}
}

// finish ends the stream once; it runs on the reader goroutine, which is
// the only sender on events.
func (s *Subscription) finish(reason string, err error) {
	s.endOnce.Do(func() {
		s.mu.Lock()
		s.reason, s.err = reason, err
		s.mu.Unlock()
		close(s.events)
	})
}
