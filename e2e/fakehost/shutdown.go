package fakehost

import (
	"context"
	"time"
)

// Ladder is a stop sequence (host-and-lifecycle §8).
type Ladder int

const (
	// LadderDaemon: `shutdown` without params (2 s for the reply, which is
	// ignored), `exit` notification (write bounded to 2 s), stdin left open,
	// 2 s for the process to exit, then SIGKILL. A plugin that only exits on
	// stdin EOF is killed here.
	LadderDaemon Ladder = iota
	// LadderTransport: `transport/shutdown` without params first (5 s;
	// -32601 and -32001 are accepted as "legacy lifecycle"), then as
	// LadderDaemon.
	LadderTransport
	// LadderTestkit: close stdin, wait 750 ms, kill. Never shutdown/exit.
	LadderTestkit
)

// Ladder timings.
const (
	ShutdownReplyTimeout     = 2 * time.Second
	ExitWriteTimeout         = 2 * time.Second
	DaemonExitWait           = 2 * time.Second
	TransportShutdownTimeout = 5 * time.Second
	TestkitExitWait          = 750 * time.Millisecond
)

func (l Ladder) String() string {
	return [...]string{"daemon", "transport", "testkit"}[l]
}

// ExitReport describes how the process ended.
type ExitReport struct {
	// ExitedByItself is false when the ladder had to SIGKILL it.
	ExitedByItself bool
	// ExitCode is the exit status; -1 when killed by a signal.
	ExitCode int
	// Elapsed runs from the start of the ladder to the process's end.
	Elapsed time.Duration
	// ShutdownReply is the reply to `shutdown` (nil on timeout or when the
	// ladder does not send it).
	ShutdownReply *Response
	// TransportShutdownReply is the reply to `transport/shutdown`.
	// TransportShutdownTolerated is false when it was an error other than
	// -32601/-32001 (the daemon surfaces those) or never came.
	TransportShutdownReply     *Response
	TransportShutdownTolerated bool
}

// Shutdown runs ladder l and always leaves the process reaped. The error is
// non-nil only if ctx ended early (the process is then killed at once).
func (h *Host) Shutdown(ctx context.Context, l Ladder) (*ExitReport, error) {
	start := time.Now()
	rep := &ExitReport{}
	bounded := func(d time.Duration, f func(context.Context)) {
		c, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		f(c)
	}
	switch l {
	case LadderTestkit:
		h.CloseStdin()
		h.waitExit(ctx, TestkitExitWait)
	default:
		if l == LadderTransport {
			bounded(TransportShutdownTimeout, func(c context.Context) {
				rep.TransportShutdownReply, _ = h.Call(c, "transport/shutdown", nil)
			})
			if r := rep.TransportShutdownReply; r != nil {
				rep.TransportShutdownTolerated = r.Error == nil || r.Error.Code == -32601 || r.Error.Code == -32001
			}
		}
		bounded(ShutdownReplyTimeout, func(c context.Context) {
			rep.ShutdownReply, _ = h.Call(c, "shutdown", nil)
		})
		h.notify("exit", nil, ExitWriteTimeout)
		// The daemon marks the host dead here but keeps the write half of
		// stdin open until the host object is dropped, so a plugin waiting
		// for EOF sees none.
		h.mu.Lock()
		h.dead = true
		h.mu.Unlock()
		h.waitExit(ctx, DaemonExitWait)
	}

	if exited, code := h.Exited(); exited {
		rep.ExitedByItself, rep.ExitCode = true, code
	} else {
		h.Kill()
		rep.ExitCode = -1
	}
	h.mu.Lock()
	rep.Elapsed = h.exitAt.Sub(start)
	h.mu.Unlock()
	h.settle(2 * time.Second) // the reader gets up to 2 s to finish
	return rep, ctx.Err()
}

func (h *Host) waitExit(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-h.exited:
	case <-t.C:
	case <-ctx.Done():
	}
}
