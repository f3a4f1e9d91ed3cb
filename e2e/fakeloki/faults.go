package fakeloki

import (
	"net/http"
	"sync"
	"time"
)

// Fault hooks beyond FailNext and SetLatency. All are opt-in: a server
// nobody calls them on answers as Loki would. Path faults are keyed by URL
// path (e.g. "/loki/api/v1/push", "/ready"), queue per path in the order
// they were added, and apply after authentication, like FailNext.

// pathFault is what the next requests to one path get instead of (or
// before) their answer.
type pathFault struct {
	left   int // requests it still applies to; < 0 for every one
	status int
	body   string
	hang   bool          // never answer; wait for the client or Close
	hold   chan struct{} // wait until closed, then answer normally
}

// FailPath makes the next n requests to path (every one until ClearFaults
// when n < 0) answer status with body, as a failing Loki component or a
// proxy in front of it would. An empty body gets FailNext's Loki-like
// text; a 429 carries Retry-After.
func (s *Server) FailPath(path string, n, status int, body string) {
	s.addFault(path, &pathFault{left: n, status: status, body: body})
}

// HangPath makes the next n requests to path (every one until ClearFaults
// when n < 0) wait without an answer until the client gives up or the
// server closes, as a partitioned or overloaded Loki does.
func (s *Server) HangPath(path string, n int) {
	s.addFault(path, &pathFault{left: n, hang: true})
}

// HoldNext holds the next request to path until release is called, then
// serves it normally (unless its client gave up meanwhile), so a test can
// act while a request is in flight. release may be called more than once.
func (s *Server) HoldNext(path string) (release func()) {
	ch := make(chan struct{})
	s.addFault(path, &pathFault{left: 1, hold: ch})
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// Held is how many requests to path HoldNext is holding right now: one
// while it waits for release, none once released or once its client gave
// up.
func (s *Server) Held(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holding[path]
}

func (s *Server) countHeld(path string, d int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holding == nil {
		s.holding = map[string]int{}
	}
	s.holding[path] += d
}

// ClearFaults drops every pending fault: FailNext's count and the path
// faults not yet applied. Requests already hanging or held stay so.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failN, s.faults = 0, nil
}

func (s *Server) addFault(path string, f *pathFault) {
	if f.left == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults == nil {
		s.faults = map[string][]*pathFault{}
	}
	s.faults[path] = append(s.faults[path], f)
}

// takeFault returns the fault for a request to path, if one is pending,
// counting the request against it.
func (s *Server) takeFault(path string) *pathFault {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.faults[path]
	if len(q) == 0 {
		return nil
	}
	f := q[0]
	if f.left > 0 {
		if f.left--; f.left == 0 {
			s.faults[path] = q[1:]
		}
	}
	return f
}

// applyPathFault applies the pending fault for r's path, if any, and
// reports whether r should still be served.
func (s *Server) applyPathFault(w http.ResponseWriter, r *http.Request) bool {
	f := s.takeFault(r.URL.Path)
	switch {
	case f == nil:
		return true
	case f.hang:
		select {
		case <-r.Context().Done():
		case <-s.ctx.Done():
		}
		return false
	case f.hold != nil:
		s.countHeld(r.URL.Path, +1)
		defer s.countHeld(r.URL.Path, -1)
		select {
		case <-f.hold:
			return r.Context().Err() == nil
		case <-r.Context().Done():
		case <-s.ctx.Done():
		}
		return false
	}
	writeFault(w, f.status, f.body)
	return false
}

// never is the visibility time of entries held back by HoldIngestion or
// HideStored: later than any query.
var never = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// HoldIngestion keeps entries accepted from now on out of query_range
// until CatchUp, as an ingestion path that stalled would (tails still see
// them as they arrive). Unlike SetIngestionLag it has no end of its own.
func (s *Server) HoldIngestion() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = true
}

// HideStored hides every entry stored so far from query_range until
// CatchUp, as if none had been ingested yet.
func (s *Server) HideStored() { s.setVisible(func(time.Time) time.Time { return never }) }

// CatchUp ends HoldIngestion and makes every stored entry visible to
// query_range at once (entries within SetIngestionLag included): the
// ingestion path caught up.
func (s *Server) CatchUp() {
	s.mu.Lock()
	s.held = false
	s.mu.Unlock()
	now := time.Now()
	s.setVisible(func(v time.Time) time.Time {
		if v.After(now) {
			return now
		}
		return v
	})
}

// setVisible rewrites the visibility time of every stored entry.
func (s *Server) setVisible(fn func(time.Time) time.Time) {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, t := range st.tenants {
		for _, str := range t.streams {
			for i := range str.entries {
				str.entries[i].visible = fn(str.entries[i].visible)
			}
		}
	}
}

// visibleFrom is when query_range starts returning an entry accepted now.
func (s *Server) visibleFrom(now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		return never
	}
	return now.Add(s.lag)
}

// DropTailEntries makes open tails lose the next n entries accepted while
// a tail of their tenant is open: each tail reports them in
// dropped_entries instead of sending them, as Loki does for a tail that
// fell behind.
func (s *Server) DropTailEntries(n int) { s.tailDrops.Store(int64(max(n, 0))) }

// takeTailDrops claims up to n of the entries DropTailEntries asked for.
func (s *Server) takeTailDrops(n int) int {
	for {
		left := s.tailDrops.Load()
		k := min(int64(n), left)
		if k <= 0 {
			return 0
		}
		if s.tailDrops.CompareAndSwap(left, left-k) {
			return int(k)
		}
	}
}
