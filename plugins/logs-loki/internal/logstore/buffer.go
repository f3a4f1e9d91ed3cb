package logstore

import (
	"sync"
	"time"
)

// buffer is the read-your-writes buffer: the most recently stored entries
// (bounded by count, bytes and age), merged into query and tail results so a
// store followed at once by a query or tail sees its entries even while
// Loki's ingestion path lags. Live tails of this process also subscribe to
// it, so they see this process's writes without waiting for Loki.
type buffer struct {
	max      int
	maxBytes int
	ttl      time.Duration

	mu    sync.Mutex
	items []buffered // ring, oldest at head
	head  int
	n     int
	bytes int
	subs  map[chan<- []record]struct{}
}

type buffered struct {
	rec    record
	size   int
	stored time.Time
}

func newBuffer(max, maxBytes int, ttl time.Duration) *buffer {
	return &buffer{max: max, maxBytes: maxBytes, ttl: ttl, items: make([]buffered, max), subs: map[chan<- []record]struct{}{}}
}

// entrySize approximates the memory an entry holds.
func entrySize(e Entry) int {
	n := len(e.ID) + len(e.TS) + len(e.Target) + len(e.Message) + len(e.Fields) + 128
	if e.SourceName != nil {
		n += len(*e.SourceName)
	}
	return n
}

// add remembers entries that Loki accepted and hands them to live tails
// (without blocking: a tail that is behind reads them from Loki instead).
func (b *buffer) add(recs []record) {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range recs {
		size := entrySize(r.Entry)
		for b.n > 0 && (b.n == b.max || b.bytes+size > b.maxBytes) {
			b.bytes -= b.items[b.head].size
			b.items[b.head] = buffered{}
			b.head = (b.head + 1) % b.max
			b.n--
		}
		b.items[(b.head+b.n)%b.max] = buffered{rec: r, size: size, stored: now}
		b.n++
		b.bytes += size
	}
	for ch := range b.subs {
		select {
		case ch <- recs:
		default:
		}
	}
}

// matching returns the buffered entries in [start, end) that keep passes.
func (b *buffer) matching(start, end int64, keep func(record) bool) []record {
	cutoff := time.Now().Add(-b.ttl)
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []record
	for k := 0; k < b.n; k++ {
		it := b.items[(b.head+k)%b.max]
		if it.stored.Before(cutoff) || it.rec.NS < start || it.rec.NS >= end || !keep(it.rec) {
			continue
		}
		out = append(out, it.rec)
	}
	return out
}

// subscribe registers a live tail; the returned function unregisters it.
func (b *buffer) subscribe() (<-chan []record, func()) {
	ch := make(chan []record, 256)
	b.mu.Lock()
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
	}
}

// seenSet is a bounded set of ids (first in, first out) for tail dedup.
type seenSet struct {
	max   int
	set   map[string]struct{}
	order []string
}

func newSeenSet(max int) *seenSet { return &seenSet{max: max, set: map[string]struct{}{}} }

// add reports whether id is new, and remembers it.
func (s *seenSet) add(id string) bool {
	if _, ok := s.set[id]; ok {
		return false
	}
	s.set[id] = struct{}{}
	s.order = append(s.order, id)
	if len(s.order) > s.max {
		delete(s.set, s.order[0])
		s.order = s.order[1:]
	}
	return true
}
