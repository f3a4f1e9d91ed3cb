package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// totals caches list totals. Counting every match of a broad filter is the
// one list cost that grows with the table (a 100k-subject database takes
// milliseconds to count thousands of matches), while the daemon re-lists
// the same filters over and over between changes. Every mutation, from any
// process, appends to subject_events, so the newest change-log seq is a
// database-wide generation: a total counted at generation g is exact for
// as long as the newest seq is still g.
type totals struct {
	mu  sync.Mutex
	gen int64
	m   map[string]int64
}

// maxTotals bounds the cache; past it the cache starts over.
const maxTotals = 256

func (c *totals) get(gen int64, key string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return 0, false
	}
	n, ok := c.m[key]
	return n, ok
}

func (c *totals) put(gen int64, key string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || c.m == nil || len(c.m) >= maxTotals {
		c.gen, c.m = gen, map[string]int64{}
	}
	c.m[key] = n
}

// total counts the matches of cond, or answers from the cache. The
// generation is read before counting, so a write that lands in between
// can only make the entry stale-tagged (recounted next time), never wrong.
func (s *Store) total(ctx context.Context, cond string, args []any) (int64, error) {
	gen, err := s.LastEventSeq(ctx)
	if err != nil {
		return 0, err
	}
	var b strings.Builder
	b.WriteString(cond)
	for _, a := range args {
		fmt.Fprintf(&b, "\x00%T:%v", a, a)
	}
	key := b.String()
	if n, ok := s.totals.get(gen, key); ok {
		return n, nil
	}
	var n int64
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM subjects s WHERE "+cond, args...).Scan(&n); err != nil {
		return 0, err
	}
	s.totals.put(gen, key, n)
	return n, nil
}
