package bench

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
)

// TestMemoryLargeFrame: a 16 MiB frame raises the child's peak RSS by no
// more than about 3× the frame. example/digest decodes the whole payload
// and answers small, which isolates what pluginkit spends on the frame;
// example/echo then sends 16 MiB back, the worst case, bounded at 6×
// (the frame in, its decoded copy, the encoder's buffer, the frame out).
func TestMemoryLargeFrame(t *testing.T) {
	for _, tc := range []struct {
		method string
		bound  float64
	}{{"example/digest", 3.0}, {"example/echo", 6.0}} {
		t.Run(tc.method, func(t *testing.T) {
			c := spawn(t, binaries.Path(t, "animus-example"))
			c.handshake(t)
			c.roundTrip(t, tc.method, `{"message":"warm"}`)
			before := vmStatus(t, c.cmd.Process.Pid, "VmHWM")
			msg := strings.Repeat("m", 16<<20-256)
			line := c.roundTrip(t, tc.method, `{"message":"`+msg+`"}`)
			if tc.method == "example/echo" && !bytes.Contains(line, []byte(msg)) {
				t.Fatalf("large echo lost data")
			}
			if tc.method == "example/digest" && !bytes.Contains(line, []byte(`"bytes":16776960`)) {
				t.Fatalf("digest answered %s", line)
			}
			peak := vmStatus(t, c.cmd.Process.Pid, "VmHWM")
			growth := float64(peak-before) / float64(16<<20)
			t.Logf("%s, 16 MiB frame: peak RSS %d MiB → %d MiB, growth %.2f× the frame", tc.method, before>>20, peak>>20, growth)
			if growth > tc.bound {
				t.Errorf("peak RSS grew %.2f× the frame size, want ≤ %.1f×", growth, tc.bound)
			}
		})
	}
}

// TestMemoryHugeLineRejected: a 100 MiB line is answered -32700 and the
// child's peak RSS does not follow the line's size.
func TestMemoryHugeLineRejected(t *testing.T) {
	c := spawn(t, binaries.Path(t, "animus-example"))
	c.handshake(t)
	before := vmStatus(t, c.cmd.Process.Pid, "VmHWM")
	chunk := []byte(strings.Repeat("z", 1<<20))
	done := make(chan error, 1)
	go func() {
		if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","id":"huge","method":"example/echo","params":{"message":"`); err != nil {
			done <- err
			return
		}
		for range 100 {
			if _, err := c.in.Write(chunk); err != nil {
				done <- err
				return
			}
		}
		_, err := io.WriteString(c.in, "\"}}\n")
		done <- err
	}()
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(line, []byte(`"code":-32700`)) || !bytes.Contains(line, []byte(`"id":null`)) {
		t.Fatalf("100 MiB line answered %s", line)
	}
	time.Sleep(10 * time.Millisecond)
	peak := vmStatus(t, c.cmd.Process.Pid, "VmHWM")
	t.Logf("100 MiB line: peak RSS %d MiB → %d MiB (+%d MiB)", before>>20, peak>>20, (peak-before)>>20)
	if peak-before > 24<<20 {
		t.Errorf("rejecting a 100 MiB line raised peak RSS by %d MiB; it must not buffer the line", (peak-before)>>20)
	}
	// Still serving.
	c.roundTrip(t, "$/ping", `{}`)
}
