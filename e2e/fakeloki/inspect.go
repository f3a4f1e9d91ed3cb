package fakeloki

import (
	"maps"
	"net/http"
	"time"
)

// What a test can read back about the traffic and the stored data, beyond
// Pushes, Requests and Entries. None of it changes what the server answers.

// pathSeen is what was received on one URL path.
type pathSeen struct {
	n      int
	header http.Header // of the latest request
}

// Stream is one stored stream: its labels (service_name included when the
// fake added it) and its entries, oldest first (ties in arrival order).
type Stream struct {
	Labels  map[string]string
	Entries []Entry
}

// record notes r before anything else happens to it, so failed, held and
// refused requests count too.
func (s *Server) record(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string]*pathSeen{}
	}
	p := s.seen[r.URL.Path]
	if p == nil {
		p = &pathSeen{}
		s.seen[r.URL.Path] = p
	}
	p.n++
	p.header = r.Header.Clone()
}

// RequestsTo counts the requests received for a URL path (such as
// "/loki/api/v1/push"), including those that failed, were refused or are
// still held.
func (s *Server) RequestsTo(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.seen[path]; p != nil {
		return p.n
	}
	return 0
}

// LastHeader returns a copy of the headers of the latest request to path
// (nil before the first), to check what a client sends: tenant,
// credentials, encodings.
func (s *Server) LastHeader(path string) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.seen[path]; p != nil {
		return p.header.Clone()
	}
	return nil
}

// Streams returns a copy of the tenant's stored streams, ordered by their
// label set. Without X-Scope-OrgID the tenant is "fake".
func (s *Server) Streams(tenantID string) []Stream {
	snap := s.store.snapshot(tenantID)
	out := make([]Stream, len(snap))
	for i, st := range snap {
		out[i] = Stream{Labels: maps.Clone(st.labels), Entries: st.entries}
		for j := range st.entries {
			out[i].Entries[j].SM = maps.Clone(st.entries[j].SM)
		}
	}
	return out
}

// StreamsPerPush lists, for each push decoded so far, how many streams it
// carried, in arrival order; it shows whether a client groups a batch's
// entries by label set (as Promtail and Alloy do) or sends one stream per
// entry.
func (s *Server) StreamsPerPush() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.pushSizes...)
}

// TailStarts lists the start of every tail accepted so far (the start
// parameter, or its default), in arrival order: where a client resumed.
func (s *Server) TailStarts() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.tailStarts...)
}

func (s *Server) notePush(streams int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pushSizes = append(s.pushSizes, streams)
}

func (s *Server) noteTail(start time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tailStarts = append(s.tailStarts, start)
}
