package control

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// DefaultPoolSize is how many persistent connections unary calls share.
const DefaultPoolSize = 8

// dialTimeout bounds connecting to the socket; a local Unix socket either
// accepts at once or is not there.
const dialTimeout = 2 * time.Second

// Pool shares a few persistent control connections among unary calls. It
// dials lazily, on the first call that finds no idle connection, and grows
// up to its size; beyond that, calls are pipelined on the least busy
// connection. Dead connections are dropped and replaced on demand, so a
// restarted daemon is picked up by the next call.
type Pool struct {
	path string
	size int

	mu      sync.Mutex
	conns   []*conn
	dialing int
	dialed  chan struct{} // closed and replaced whenever a dial finishes
	closed  bool
	dials   int
}

// NewPool returns a pool for the socket at path. Nothing is dialled yet.
func NewPool(path string, size int) *Pool {
	if size <= 0 {
		size = DefaultPoolSize
	}
	return &Pool{path: path, size: size, dialed: make(chan struct{})}
}

// Path is the control socket path.
func (p *Pool) Path() string { return p.path }

// Call sends one unary request and returns its raw result. params nil
// omits the params key (the daemon reads that as {}). ctx bounds the whole
// call, dialling included.
func (p *Pool) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	for attempt := 0; ; attempt++ {
		c, err := p.acquire(ctx)
		if err != nil {
			return nil, err
		}
		res, err := c.call(ctx, method, params)
		// A request whose write failed was never read by the daemon, so it
		// is safe to send again on a fresh connection, once.
		if errors.Is(err, errNotSent) && attempt == 0 {
			p.forget(c)
			continue
		}
		if errors.Is(err, errNotSent) {
			return nil, ErrConnectionLost
		}
		return res, err
	}
}

// Subscribe opens a stream on a connection of its own (see Subscribe).
func (p *Pool) Subscribe(ctx context.Context, method string, params any) (*Subscription, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout+30*time.Second)
	defer cancel()
	return Subscribe(ctx, p.path, method, params)
}

// acquire returns an idle connection, a new one while the pool has room,
// or else the least busy one. At capacity with every slot still dialling,
// it waits for a dial to finish rather than exceed the size.
func (p *Pool) acquire(ctx context.Context) (*conn, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		best := p.pickLocked()
		full := len(p.conns)+p.dialing >= p.size
		switch {
		case best != nil && (best.inflight.Load() == 0 || full):
			p.mu.Unlock()
			return best, nil
		case best == nil && full:
			wait := p.dialed
			p.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		p.dialing++
		p.dials++
		p.mu.Unlock()
		return p.dialNew(ctx, best)
	}
}

// pickLocked drops dead connections and returns the least busy live one.
func (p *Pool) pickLocked() *conn {
	live := p.conns[:0]
	var best *conn
	for _, c := range p.conns {
		if !c.alive() {
			continue
		}
		live = append(live, c)
		if best == nil || c.inflight.Load() < best.inflight.Load() {
			best = c
		}
	}
	for i := len(live); i < len(p.conns); i++ {
		p.conns[i] = nil
	}
	p.conns = live
	return best
}

func (p *Pool) dialNew(ctx context.Context, fallback *conn) (*conn, error) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	c, err := dial(dctx, p.path)
	cancel()

	p.mu.Lock()
	defer p.mu.Unlock()
	p.dialing--
	close(p.dialed) // wake callers waiting for a slot
	p.dialed = make(chan struct{})
	if err != nil {
		if fallback != nil && fallback.alive() {
			return fallback, nil // busy beats unreachable
		}
		return nil, err
	}
	if p.closed {
		c.kill(ErrClosed)
		return nil, ErrClosed
	}
	p.conns = append(p.conns, c)
	return c, nil
}

func (p *Pool) forget(c *conn) {
	c.kill(ErrClosed)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.conns {
		if x == c {
			p.conns = append(p.conns[:i], p.conns[i+1:]...)
			return
		}
	}
}

// Stats reports the open connections and how many dials the pool has made.
func (p *Pool) Stats() (open, dials int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if c.alive() {
			open++
		}
	}
	return open, p.dials
}

// Close closes every pooled connection; calls in flight fail with
// ErrConnectionLost. Streams own their connections and are closed by their
// holders.
func (p *Pool) Close() {
	p.mu.Lock()
	conns := p.conns
	p.conns, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range conns {
		c.kill(ErrClosed)
	}
}
