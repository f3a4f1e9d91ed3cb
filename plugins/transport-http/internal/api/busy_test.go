package api

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// busyCounter is an Options.Busy that records how many requests it counts
// at once and the most it saw; like pluginkit.Peer.Busy, a done called
// again counts nothing.
type busyCounter struct {
	now, most atomic.Int32
}

func (b *busyCounter) busy() func() {
	n := b.now.Add(1)
	for m := b.most.Load(); n > m && !b.most.CompareAndSwap(m, n); m = b.most.Load() {
	}
	var once atomic.Bool
	return func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		b.now.Add(-1)
	}
}

// TestBusyCountsRequests: every request is counted while it runs (the
// plugin passes pluginkit.Peer.Busy, which widens the process when they
// overlap) and counted out exactly once when it ends, errors included; an
// event stream is counted out once open, so an open dashboard stream does
// not hold the process wide.
func TestBusyCountsRequests(t *testing.T) {
	d := newFakeDaemon(t)
	d.set("subject/watch", reply{events: raws()})
	var b busyCounter
	h := newHarness(t, Options{Busy: b.busy, KeepAlive: 20 * time.Millisecond}, d)

	for _, tc := range []struct {
		name   string
		rq     request
		status int
	}{
		{"a control call", request{method: "GET", target: "/api/v1/daemon/status"}, 200},
		{"an unknown route", request{method: "GET", target: "/api/v1/nowhere"}, 404},
		{"a refused body", request{method: "POST", target: "/api/v1/queue/enqueue", body: strings.Repeat("x", 2<<20)}, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if x := h.on(t).do(tc.rq); x.status != tc.status {
				t.Fatalf("status %d, want %d: %s", x.status, tc.status, x.body)
			}
			if n := b.now.Load(); n != 0 {
				t.Fatalf("%d requests still counted after the response", n)
			}
		})
	}

	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.do(request{method: "GET", target: "/api/v1/daemon/status"})
		}()
	}
	wg.Wait()
	if n := b.now.Load(); n != 0 {
		t.Fatalf("%d requests still counted after 8 concurrent ones", n)
	}

	ls := h.openAlive(t, "/api/v1/subjects/watch?kind=task")
	if n := b.now.Load(); n != 0 {
		t.Errorf("an open stream is counted busy (%d)", n)
	}
	ls.cancel()
	waitFor(t, "the stream to be released", func() bool { return h.s.Streams() == 0 })
	if b.most.Load() < 1 {
		t.Error("no request was ever counted")
	}
}
