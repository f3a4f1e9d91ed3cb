package steplog

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentBeginExactlyOneNew races begin_step on the same keys from
// several handles (separate connection pools, as separate processes have)
// and several goroutines each. Exactly one caller may get "new" per key;
// the e2e suite repeats this with real processes.
func TestConcurrentBeginExactlyOneNew(t *testing.T) {
	const handles, perHandle, keys = 4, 3, 40
	f := newFixture(t)
	f.run("r", "p")
	stores := []*Log{f.Log}
	for range handles - 1 {
		stores = append(stores, f.open())
	}
	type win struct{ key, id string }
	wins := make(chan win, handles*perHandle*keys)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, s := range stores {
		for g := range perHandle {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := range keys {
					k := (i + g*7) % keys // different orders, same keys
					key := fmt.Sprintf("key-%d", k)
					r, err := s.BeginStep(context.Background(), req("r", "p", fmt.Sprint(k), key, time.Hour))
					if err != nil {
						t.Error(err)
						return
					}
					switch r.Status {
					case StatusNew:
						wins <- win{key, r.StepID}
					case StatusInProgress:
					default:
						t.Errorf("%s: status %s", key, r.Status)
					}
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	close(wins)
	got := map[string]int{}
	for w := range wins {
		got[w.key]++
	}
	for k := range keys {
		if n := got[fmt.Sprintf("key-%d", k)]; n != 1 {
			t.Errorf("key-%d: %d callers got new, want exactly 1", k, n)
		}
	}
}
