package fakehost

import (
	"strings"
	"testing"
	"time"
)

func TestShutdownLadders(t *testing.T) {
	cases := []struct {
		name       string
		mode       string
		ladder     Ladder
		byItself   bool
		minElapsed time.Duration
		maxElapsed time.Duration
		sawEOF     bool     // did the plugin see stdin EOF before it ended?
		frames     []string // host→plugin frames that must have arrived, in order
	}{
		{"daemon: exits on exit", "good", LadderDaemon, true, 0, time.Second, false,
			[]string{`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`, `{"jsonrpc":"2.0","method":"exit"}`}},
		{"daemon: EOF-only plugin is SIGKILLed after 2 s", "ignores-exit", LadderDaemon, false, DaemonExitWait, DaemonExitWait + 1500*time.Millisecond, false,
			[]string{`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`, `{"jsonrpc":"2.0","method":"exit"}`}},
		{"transport: transport/shutdown first, -32601 tolerated", "good", LadderTransport, true, 0, time.Second, false,
			[]string{`{"jsonrpc":"2.0","id":2,"method":"transport/shutdown"}`, `{"jsonrpc":"2.0","id":3,"method":"shutdown"}`, `{"jsonrpc":"2.0","method":"exit"}`}},
		{"testkit: EOF-only plugin exits by itself", "ignores-exit", LadderTestkit, true, 0, TestkitExitWait, true, nil},
		{"testkit: stuck plugin killed after 750 ms", "never-exits", LadderTestkit, false, TestkitExitWait, TestkitExitWait + 1500*time.Millisecond, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := New(t, miniConfig(c.mode))
			mustInit(t, h, Handshake{Preset: PresetDaemon})
			rep, err := h.Shutdown(testCtx(t), c.ladder)
			if err != nil {
				t.Fatal(err)
			}
			if rep.ExitedByItself != c.byItself {
				t.Errorf("ExitedByItself = %v, want %v (report %+v)", rep.ExitedByItself, c.byItself, rep)
			}
			if c.byItself && rep.ExitCode != 0 || !c.byItself && rep.ExitCode != -1 {
				t.Errorf("ExitCode = %d", rep.ExitCode)
			}
			if rep.Elapsed < c.minElapsed || rep.Elapsed > c.maxElapsed {
				t.Errorf("Elapsed = %v, want [%v, %v]", rep.Elapsed, c.minElapsed, c.maxElapsed)
			}
			stderr := h.Stderr()
			if got := strings.Contains(stderr, "\neof\n"); got != c.sawEOF {
				t.Errorf("plugin saw EOF = %v, want %v (daemon ladders keep stdin open)", got, c.sawEOF)
			}
			pos := 0
			for _, f := range c.frames {
				i := strings.Index(stderr[pos:], "recv: "+f+"\n")
				if i < 0 {
					t.Errorf("frame %s not received (in order); stderr:\n%s", f, stderr)
					break
				}
				pos += i
			}
			if c.ladder != LadderTestkit && (rep.ShutdownReply == nil || string(rep.ShutdownReply.Result) != "{}") {
				t.Errorf("shutdown reply = %+v", rep.ShutdownReply)
			}
			if c.ladder == LadderTransport {
				r := rep.TransportShutdownReply
				if r == nil || r.Error == nil || r.Error.Code != -32601 || !rep.TransportShutdownTolerated {
					t.Errorf("transport/shutdown reply = %+v tolerated=%v", r, rep.TransportShutdownTolerated)
				}
			}
			if c.ladder == LadderTestkit && strings.Contains(stderr, `"method":"shutdown"`) {
				t.Error("testkit ladder sent shutdown")
			}
			// After the ladder the host is dead: requests fail at once.
			if _, err := h.Call(testCtx(t), "$/ping", nil); err == nil {
				t.Error("call after shutdown succeeded")
			}
		})
	}
}
