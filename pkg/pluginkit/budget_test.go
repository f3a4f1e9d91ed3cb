package pluginkit

import (
	"context"
	"testing"
	"time"
)

// misbehaviour is what a plugin may do wrong during shutdown: a handler
// that ignores its context, a Peer.Go task that ignores its context, and a
// Close that takes far longer than the daemon waits.
type misbehaviour struct {
	handler, task, close bool
}

// TestShutdownBudget: the shutdown reply is written within shutdownReplyBy
// whatever handlers, tasks and Close do; a request whose handler ignored
// its cancellation is answered -32002 before it, so the host is never
// left waiting, and the late result the handler returns is dropped.
func TestShutdownBudget(t *testing.T) {
	tests := []struct {
		name string
		bad  misbehaviour
	}{
		{"well behaved", misbehaviour{}},
		{"handler ignores its context", misbehaviour{handler: true}},
		{"task ignores its context", misbehaviour{task: true}},
		{"slow Close", misbehaviour{close: true}},
		{"all three at once", misbehaviour{handler: true, task: true, close: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			elapsed := measureShutdown(t, tt.bad)
			t.Logf("shutdown reply after %v", elapsed)
			if elapsed >= shutdownReplyBy {
				t.Fatalf("shutdown answered after %v, want < %v", elapsed, shutdownReplyBy)
			}
			// A handler that honours its context returns right after the
			// grace: nothing waits for the cancel phase or Close.
			if tt.bad == (misbehaviour{}) && elapsed >= drainGrace+cancelGrace {
				t.Fatalf("a well-behaved plugin took %v to shut down", elapsed)
			}
		})
	}
}

func measureShutdown(t *testing.T, bad misbehaviour) time.Duration {
	release := make(chan struct{}) // lets the abandoned goroutines end with the test
	t.Cleanup(func() { close(release) })
	stubborn := func() {
		select {
		case <-release:
		case <-time.After(time.Minute):
		}
	}
	p := testPlugin()
	Handle(p.Mux, "test/stubborn", func(ctx context.Context, _ NoParams) (string, error) {
		if bad.handler {
			stubborn()
			return "late", nil
		}
		<-ctx.Done()
		return "", ctx.Err()
	})
	Handle(p.Mux, "test/task", func(ctx context.Context, _ NoParams) (bool, error) {
		PeerFrom(ctx).Go(func(ctx context.Context) {
			if bad.task {
				stubborn()
				return
			}
			<-ctx.Done()
		})
		return true, nil
	})
	p.Close = func(ctx context.Context) error {
		if bad.close {
			stubborn()
		}
		return nil
	}
	h := startHost(t, p)
	h.initialize()
	result(t, h.call("test/task", nil))
	slow := h.sendRequest("test/stubborn", nil)
	time.Sleep(20 * time.Millisecond) // let the handler start
	start := time.Now()
	shut := h.sendRequest("shutdown", nil)
	var slowFrame map[string]any
	for {
		f := h.next(3 * time.Second)
		id, _ := f["id"].(float64)
		if int(id) == slow {
			slowFrame = f
		}
		if int(id) == shut {
			elapsed := time.Since(start)
			if slowFrame == nil {
				t.Fatalf("shutdown answered while request %d was still unanswered", slow)
			}
			if code, _, cat := errCode(t, slowFrame); code != CodeRequestCancelled || cat != "cancelled" {
				t.Fatalf("the in-flight request was answered %v, want -32002", slowFrame)
			}
			h.notify("exit", nil)
			h.waitDone(2 * time.Second)
			return elapsed
		}
	}
}
