package storage

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// The list-after-write path: a total cached at one generation is brought
// forward across this process's recorded writes without a count, and
// anything it cannot account for row by row makes it count.
func TestTotalsBringForwardOwnWrites(t *testing.T) {
	f := &model.Filter{Status: []model.Status{model.Ready}, LabelsAny: []string{"a"}}
	in := &model.Subject{Kind: "task", Status: model.Ready, Labels: []string{"a"}}
	out := &model.Subject{Kind: "task", Status: model.Done, Labels: []string{"a"}}
	var c Totals
	c.Put(10, "k", 5)
	if n, ok := c.Get(10, "k", f, nil); !ok || n != 5 {
		t.Fatalf("same generation: %d %v", n, ok)
	}
	c.Record(11, nil, in)  // create, matching
	c.Record(12, in, out)  // update moving it out
	c.Record(13, out, in)  // and back in
	c.Record(14, in, nil)  // delete
	c.Record(15, nil, out) // create, not matching
	want := []int64{6, 5, 6, 5, 5}
	for i, w := range want {
		if n, ok := c.Get(int64(11+i), "k", f, nil); !ok || n != w {
			t.Fatalf("gen %d: %d %v, want %d", 11+i, n, ok, w)
		}
	}
	in.Status = model.Blocked // the record is a copy
	c.Record(16, nil, in)
	in.Status = model.Ready
	if n, ok := c.Get(16, "k", f, nil); !ok || n != 5 {
		t.Fatalf("the record followed the caller's subject: %d %v", n, ok)
	}
	// Row 17 was another process's: count.
	c.Record(18, nil, in)
	if _, ok := c.Get(18, "k", f, nil); ok {
		t.Fatal("brought forward across a row this process did not write")
	}
	// An older snapshot neither reads nor replaces the newer entry.
	if _, ok := c.Get(15, "k", f, nil); ok {
		t.Fatal("answered an older generation")
	}
	c.Put(15, "k", 99)
	if n, ok := c.Get(16, "k", f, nil); !ok || n != 5 {
		t.Fatalf("an older count replaced the newer total: %d %v", n, ok)
	}
	// Too wide a gap: count rather than walk it.
	c.Put(100, "k", 1)
	for seq := int64(101); seq <= 101+maxDeltas; seq++ {
		c.Record(seq, out, out)
	}
	if _, ok := c.Get(101+maxDeltas, "k", f, nil); ok {
		t.Fatal("walked a gap wider than maxDeltas")
	}
	if n, ok := c.Get(100+maxDeltas, "k", f, nil); !ok || n != 1 {
		t.Fatalf("gap of maxDeltas: %d %v", n, ok)
	}
	if len(c.own) > 2*maxDeltas+1 {
		t.Fatalf("%d records kept", len(c.own))
	}
}
