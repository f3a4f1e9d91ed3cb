package pluginkit

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// procs runs the process on one P while it serves at most one call at a
// time, and on all of them (the runtime's choice for the machine) as soon
// as a second call overlaps the first; after a quiet spell it narrows
// again.
//
// Why: a plugin mostly serves one call at a time, and each call crosses
// goroutines (reader → worker, an HTTP or control connection's reader →
// the waiting handler). With idle Ps the runtime wakes a second OS thread
// through a futex at every such hand-off, and the call then hops between
// threads; on one P the woken goroutine runs on the thread already
// awake. animus-transport-http's overhead over a direct control-socket
// call at one client went from ~114 to ~53 µs p50 on one P (2-vCPU VM);
// under concurrency all Ps serve as before (one P alone had cost 64
// clients ~10% of their throughput there, far more on a larger machine).
//
// Changing GOMAXPROCS stops the world for a few microseconds; it happens
// when concurrency appears (paid once by the call that finds another in
// flight) and at the end of the first lone call after narrowAfter without
// overlap, not per call.
type procs struct {
	wideN int // Ps when widened: the runtime's GOMAXPROCS at start

	busy     atomic.Int32 // calls in flight
	wide     atomic.Bool  // running on wideN Ps
	lastWide atomic.Int64 // when busy last exceeded one (UnixNano)

	mu sync.Mutex // serialises GOMAXPROCS changes
}

// narrowAfter is how long the process must see no overlapping calls
// before it goes back to one P. The first narrowing comes as late after
// the start: a process the daemon starts for one call exits long before,
// so its cold start pays no GOMAXPROCS change.
const narrowAfter = time.Second

// newProcs returns an adaptive procs for this process, or nil when there
// is nothing to adapt: one P is all the machine has, or GOMAXPROCS was
// fixed (by the environment, or at one for a Serial plugin).
func newProcs(fixed bool) *procs {
	n := runtime.GOMAXPROCS(0)
	if fixed || n <= 1 {
		return nil
	}
	p := &procs{wideN: n}
	p.wide.Store(true)
	p.lastWide.Store(time.Now().UnixNano())
	return p
}

// enter counts a call in; the returned func counts it out (once, however
// often it is called). A nil procs counts nothing.
func (p *procs) enter() func() {
	if p == nil {
		return func() {}
	}
	// The order matters against narrow, which stores wide=false before it
	// reads busy: either this load sees false and widens, or narrow sees
	// this call and stays wide.
	if p.busy.Add(1) > 1 {
		p.lastWide.Store(time.Now().UnixNano())
		if !p.wide.Load() {
			p.widen()
		}
	}
	var out atomic.Bool
	return func() {
		if !out.CompareAndSwap(false, true) {
			return
		}
		// The last call out looks whether the process has been quiet
		// long enough: no timer or goroutine of its own (a timer set at
		// start woke the netpoller, a measurable part of a cold start).
		if p.busy.Add(-1) == 0 && p.wide.Load() {
			p.narrow(time.Now())
		}
	}
}

func (p *procs) widen() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.wide.Load() {
		p.wide.Store(true)
		runtime.GOMAXPROCS(p.wideN)
	}
}

// narrow goes to one P when no calls overlapped for narrowAfter.
func (p *procs) narrow(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.wide.Load() || now.Sub(time.Unix(0, p.lastWide.Load())) < narrowAfter {
		return
	}
	p.wide.Store(false)
	if p.busy.Load() > 1 { // a call overlapped meanwhile: stay wide
		p.wide.Store(true)
		return
	}
	runtime.GOMAXPROCS(1)
}
