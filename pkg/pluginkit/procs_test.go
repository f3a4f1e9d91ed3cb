package pluginkit

import (
	"runtime"
	"testing"
	"time"
)

// TestProcs drives the adaptive GOMAXPROCS through its transitions on a
// procs made for two Ps (whatever this machine has), checking the
// runtime's actual setting after each step.
func TestProcs(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(orig) })

	type step struct {
		name  string
		do    func(p *procs, open *[]func())
		procs int // runtime.GOMAXPROCS afterwards
	}
	enter := func(p *procs, open *[]func()) { *open = append(*open, p.enter()) }
	leave := func(p *procs, open *[]func()) {
		last := (*open)[len(*open)-1]
		*open = (*open)[:len(*open)-1]
		last()
	}
	quiet := func(p *procs, _ *[]func()) { // as if the last overlap was long ago
		p.lastWide.Store(time.Now().Add(-2 * narrowAfter).UnixNano())
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a lone call right after start stays wide", []step{
			{"enter", enter, 2}, {"leave", leave, 2},
		}},
		{"the first lone call after a quiet spell narrows", []step{
			{"quiet", quiet, 2}, {"enter", enter, 2}, {"leave", leave, 1},
			{"enter again", enter, 1}, {"leave again", leave, 1},
		}},
		{"an overlapping call widens at once", []step{
			{"quiet", quiet, 2}, {"enter", enter, 2}, {"leave", leave, 1},
			{"enter", enter, 1}, {"enter a second", enter, 2},
			{"leave one", leave, 2}, {"leave the other", leave, 2},
		}},
		{"a recent overlap keeps it wide, until quiet again", []step{
			{"quiet", quiet, 2}, {"enter", enter, 2}, {"leave", leave, 1},
			{"enter", enter, 1}, {"enter a second", enter, 2}, {"leave", leave, 2}, {"leave", leave, 2},
			{"enter", enter, 2}, {"leave", leave, 2},
			{"quiet", quiet, 2}, {"enter", enter, 2}, {"leave", leave, 1},
		}},
		{"no narrowing while calls overlap, however quiet it was", []step{
			{"enter", enter, 2}, {"enter a second", enter, 2}, {"quiet", quiet, 2},
			{"leave one", leave, 2}, {"leave the other", leave, 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GOMAXPROCS(2)
			p := &procs{wideN: 2}
			p.wide.Store(true)
			p.lastWide.Store(time.Now().UnixNano())
			var open []func()
			for i, s := range tc.steps {
				s.do(p, &open)
				if got := runtime.GOMAXPROCS(0); got != s.procs {
					t.Fatalf("step %d (%s): GOMAXPROCS %d, want %d", i, s.name, got, s.procs)
				}
				if wide := p.wide.Load(); wide != (s.procs == 2) {
					t.Fatalf("step %d (%s): wide=%v with GOMAXPROCS %d", i, s.name, wide, s.procs)
				}
			}
		})
	}
}

// TestProcsNarrowRacesEnter: a narrow that starts while a second call
// enters never leaves the process on one P with two calls in flight.
func TestProcsNarrowRacesEnter(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(orig) })
	for range 200 {
		runtime.GOMAXPROCS(2)
		p := &procs{wideN: 2}
		p.wide.Store(true)
		first := p.enter()
		started := make(chan struct{})
		done := make(chan func())
		go func() {
			close(started)
			done <- p.enter()
		}()
		<-started
		p.narrow(time.Now().Add(2 * narrowAfter))
		second := <-done
		if p.busy.Load() == 2 && runtime.GOMAXPROCS(0) != 2 {
			t.Fatalf("two calls in flight on %d P", runtime.GOMAXPROCS(0))
		}
		first()
		second()
	}
}

// TestProcsFixed: nothing adapts when GOMAXPROCS was fixed, and a nil
// procs (a plugin served in process) counts nothing.
func TestProcsFixed(t *testing.T) {
	if p := newProcs(true); p != nil {
		t.Fatal("newProcs(fixed) adapts")
	}
	var p *procs
	p.enter()()
}

// TestProcsLeaveOnce: a call counted out twice (pluginkit counts a call
// out before its reply and again when its job ends) is counted out once,
// so a concurrent call is not hidden.
func TestProcsLeaveOnce(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(orig) })
	runtime.GOMAXPROCS(2)
	p := &procs{wideN: 2}
	p.wide.Store(true)
	first, second := p.enter(), p.enter()
	first()
	first()
	if n := p.busy.Load(); n != 1 {
		t.Fatalf("busy = %d after one of two calls left twice, want 1", n)
	}
	second()
	if n := p.busy.Load(); n != 0 {
		t.Fatalf("busy = %d, want 0", n)
	}
}
