// Package waitcond is a condition variable that waits with a context. The
// fakes (fake host, fake daemon, fake Slack) change their state under
// their own mutex, and tests wait for a condition on that state with a
// deadline, which sync.Cond cannot do.
package waitcond

import (
	"context"
	"sync"
)

// Cond wakes waiters when the state guarded by its mutex changes.
type Cond struct {
	mu *sync.Mutex
	ch chan struct{} // closed and replaced on every broadcast
}

// New returns a Cond over the state mu guards.
func New(mu *sync.Mutex) *Cond { return &Cond{mu: mu, ch: make(chan struct{})} }

// BroadcastLocked wakes every waiter; mu must be held.
func (c *Cond) BroadcastLocked() {
	close(c.ch)
	c.ch = make(chan struct{})
}

// Broadcast wakes every waiter; each re-checks its own condition.
func (c *Cond) Broadcast() {
	c.mu.Lock()
	c.BroadcastLocked()
	c.mu.Unlock()
}

// Wait blocks until cond, called with mu held, returns true, or ctx ends
// (then it returns ctx.Err()).
func (c *Cond) Wait(ctx context.Context, cond func() bool) error {
	for {
		c.mu.Lock()
		ok, ch := cond(), c.ch
		c.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
