package waitcond

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestWaitWakesOnBroadcastAndHonoursContext(t *testing.T) {
	var mu sync.Mutex
	n := 0
	c := New(&mu)
	done := make(chan error, 1)
	go func() { done <- c.Wait(context.Background(), func() bool { return n == 3 }) }()
	for range 3 {
		mu.Lock()
		n++
		c.BroadcastLocked()
		mu.Unlock()
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after the condition held")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c.Wait(ctx, func() bool { return false }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait on a condition that never holds: %v", err)
	}
}
