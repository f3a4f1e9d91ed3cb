package storage

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Totals caches list totals. Counting every match of a broad filter is the
// one list cost that grows with the table, while the daemon re-lists the
// same filters over and over between changes. Every mutation, from any
// process or host, appends to the change log, so the newest change-log seq
// is a database-wide generation: a total counted at generation g is exact
// for as long as the newest seq is still g. Callers read the generation
// before counting, so a write landing in between can only make an entry
// stale-tagged (recounted next time), never wrong.
type Totals struct {
	mu  sync.Mutex
	gen int64
	m   map[string]int64
}

// maxTotals bounds the cache; past it the cache starts over.
const maxTotals = 256

// Key identifies a count: the WHERE clause and its arguments.
func TotalsKey(cond string, args []any) string {
	var b strings.Builder
	b.WriteString(cond)
	for _, a := range args {
		fmt.Fprintf(&b, "\x00%T:%v", a, a)
	}
	return b.String()
}

// Get is the total counted for key at generation gen, if cached.
func (c *Totals) Get(gen int64, key string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return 0, false
	}
	n, ok := c.m[key]
	return n, ok
}

// Put records a total counted at generation gen.
func (c *Totals) Put(gen int64, key string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || c.m == nil || len(c.m) >= maxTotals {
		c.gen, c.m = gen, map[string]int64{}
	}
	c.m[key] = n
}

// Dedupe drops repeated values, keeping the first of each.
func Dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
