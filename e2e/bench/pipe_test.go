package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// child is a bare pipe client for benchmarks. The fake host records and
// validates every frame, which is right for tests and wrong for a stopwatch,
// so the benchmarks speak to both children through this instead: identical,
// minimal work on the host side.
type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func spawn(tb testing.TB, binary string) *child {
	tb.Helper()
	c := start(tb, binary, tb.TempDir())
	tb.Cleanup(c.stop)
	return c
}

// start launches binary in dir with a minimal environment (PATH, HOME)
// plus env, as NAME=VALUE (a later value wins), and stderr discarded.
// The caller ends it with stop or a Cleanup.
func start(tb testing.TB, binary, dir string, env ...string) *child {
	tb.Helper()
	cmd := exec.Command(binary)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}, env...)
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	return &child{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

// stop closes stdin, which every plugin takes as exit, and reaps it.
func (c *child) stop() {
	c.in.Close()
	_ = c.cmd.Wait()
}

// roundTrip sends one request and reads lines until its response.
func (c *child) roundTrip(tb testing.TB, method, params string) []byte {
	c.id++
	frame := `{"jsonrpc":"2.0","id":` + strconv.Itoa(c.id) + `,"method":"` + method + `","params":` + params + "}\n"
	if _, err := io.WriteString(c.in, frame); err != nil {
		tb.Fatal(err)
	}
	want := []byte(`"id":` + strconv.Itoa(c.id) + `,`)
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			tb.Fatalf("read: %v", err)
		}
		if bytes.Contains(line, want) {
			return line
		}
	}
}

func (c *child) handshake(tb testing.TB) {
	resp := c.roundTrip(tb, "initialize", `{"protocol_version":"1.1.0","host_info":{"name":"bench","version":"0"},"capabilities":{"streaming":true,"progress":false,"cancellation":true}}`)
	if !bytes.Contains(resp, []byte(`"result"`)) {
		tb.Fatalf("initialize: %s", resp)
	}
	if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","method":"initialized"}`+"\n"); err != nil {
		tb.Fatal(err)
	}
}

// vmStatus reads a VmXXX field of /proc/<pid>/status in bytes.
func vmStatus(tb testing.TB, pid int, field string) uint64 {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb << 10
		}
	}
	tb.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
