package golden

import (
	"context"
	"encoding/json"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
)

// hostConn is the player's Conn over a plugin served in this process by
// pluginkit.Serve on io.Pipe (pluginkittest.Host): the protocol layer
// exactly as the binary runs it, minus the process.
type hostConn struct{ h *pluginkittest.Host }

func (c hostConn) Send(frame []byte) error { return c.h.Send(frame) }

func (c hostConn) Await(ctx context.Context, id json.RawMessage) (json.RawMessage, error) {
	f, err := c.h.Await(ctx, id)
	return f.Result, err
}

// WaitNotifications waits for the n-th method notification since the start.
func (c hostConn) WaitNotifications(ctx context.Context, method string, n int) error {
	next := 0
	for seen := 0; seen < n; seen++ {
		var err error
		if _, next, err = c.h.WaitNotification(ctx, next, func(f pluginkittest.Frame) bool { return f.Method == method }); err != nil {
			return err
		}
	}
	return nil
}

func (c hostConn) Frames(from int) ([][]byte, int) {
	frames, next := c.h.Frames(from)
	raw := make([][]byte, len(frames))
	for i, f := range frames {
		raw[i] = f.Raw
	}
	return raw, next
}

func (c hostConn) Wait(d time.Duration) (bool, int) { return c.h.Wait(d) }
