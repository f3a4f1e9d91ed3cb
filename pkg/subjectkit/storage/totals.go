package storage

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// Totals caches list totals. Counting every match of a broad filter is the
// one list cost that grows with the table (at 100,000 subjects the COUNT
// of status+labels_any walks the whole status index: ~15 ms), while the
// daemon re-lists the same filters over and over. Every mutation, from
// any process or host, appends to the change log, so the newest
// change-log seq is a database-wide generation: a total counted at
// generation g is exact for as long as the newest seq is still g.
//
// A write starts a new generation, but the total need not be counted
// again: when every change-log row since the cached generation was
// written by this process, Totals knows each one's subject before and
// after (Record), and the new total is the old one plus, per row,
// Match(after) − Match(before) — model.Filter.Match being the SQL
// clause's twin (storagetest holds them equal). A row another process
// wrote (its states are not known here), a gap wider than maxDeltas, or a
// row whose record was dropped falls back to counting. Exactness needs
// each cached total to be counted in the same snapshot as its generation
// (Put's contract): then every row after it is a change the total does
// not include yet.
type Totals struct {
	mu  sync.Mutex
	m   map[string]total
	own map[int64]delta // change-log seq → this process's write
}

type total struct{ gen, n int64 }

// delta is one committed write: the subject before and after it (nil when
// absent: before a create, after a delete), reduced to what filters read.
type delta struct{ before, after *model.Subject }

const (
	// maxTotals bounds the cache; past it the cache starts over.
	maxTotals = 256
	// maxDeltas is the widest gap applied row by row (each row is one
	// Match per side, well under a microsecond); past it, count.
	maxDeltas = 1024
)

// TotalsKey identifies a count: the WHERE clause and its arguments.
func TotalsKey(cond string, args []any) string {
	var b strings.Builder
	b.WriteString(cond)
	for _, a := range args {
		fmt.Fprintf(&b, "\x00%T:%v", a, a)
	}
	return b.String()
}

// Get is the total of f (whose WHERE clause is key) at generation gen:
// cached at gen, or brought forward from an older cached generation by
// this process's recorded writes. ok is false when it must be counted.
func (c *Totals) Get(gen int64, key string, f *model.Filter, hints model.Hints) (n int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[key]
	if !ok || t.gen > gen || gen-t.gen > maxDeltas {
		return 0, false
	}
	n = t.n
	for seq := t.gen + 1; seq <= gen; seq++ {
		d, ok := c.own[seq]
		if !ok {
			return 0, false
		}
		if d.before != nil && f.Match(d.before, hints) {
			n--
		}
		if d.after != nil && f.Match(d.after, hints) {
			n++
		}
	}
	if gen != t.gen {
		c.m[key] = total{gen, n}
	}
	return n, true
}

// Put records n, the total for key counted in the same snapshot that had
// gen as its newest change-log seq. An entry of a newer generation stays.
func (c *Totals) Put(gen int64, key string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.m[key]; ok && t.gen > gen {
		return
	}
	if c.m == nil || len(c.m) >= maxTotals {
		c.m = map[string]total{}
	}
	c.m[key] = total{gen, n}
}

// Record notes a write of this process that committed as change-log row
// seq, taking subject before to after (nil: absent). Call it only once
// the commit is known to have happened; an unrecorded row only costs a
// count.
func (c *Totals) Record(seq int64, before, after *model.Subject) {
	d := delta{matchView(before), matchView(after)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.own == nil {
		c.own = map[int64]delta{}
	}
	c.own[seq] = d
	if len(c.own) > 2*maxDeltas {
		for s := range c.own {
			if s <= seq-maxDeltas {
				delete(c.own, s)
			}
		}
	}
}

// matchView copies what model.Filter.Match reads of s, so a record
// neither pins the caller's subject nor sees it change later.
func matchView(s *model.Subject) *model.Subject {
	if s == nil {
		return nil
	}
	v := &model.Subject{Kind: s.Kind, Status: s.Status, UpdatedAt: s.UpdatedAt,
		Labels: slices.Clone(s.Labels), Assignee: clonePtr(s.Assignee), NativeStatus: clonePtr(s.NativeStatus)}
	for _, a := range s.Attachments {
		v.Attachments = append(v.Attachments, model.Attachment{Kind: a.Kind})
	}
	return v
}

func clonePtr(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
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
