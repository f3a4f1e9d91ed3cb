package pluginkit

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// pipeHost drives Serve in process over io.Pipe, the way a host would, and
// keeps a wire log that is printed when the test fails.
type pipeHost struct {
	t      *testing.T
	in     *io.PipeWriter
	frames chan map[string]any
	done   chan error
	mu     sync.Mutex
	log    []string
	nextID int
}

func startHost(t *testing.T, p Plugin) *pipeHost {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &pipeHost{t: t, in: inW, frames: make(chan map[string]any, 1024), done: make(chan error, 1), nextID: 1}
	go func() {
		err := Serve(context.Background(), p, inR, outW)
		outW.Close()
		h.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			line := sc.Text()
			h.record("<< " + truncate(line))
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				h.record("!! non-JSON line on stdout: " + line)
				m = map[string]any{"__invalid": line}
			}
			m["__raw"] = line
			h.frames <- m
		}
		close(h.frames)
	}()
	t.Cleanup(func() {
		inW.Close()
		if t.Failed() {
			h.mu.Lock()
			t.Logf("wire log:\n%s", strings.Join(h.log, "\n"))
			h.mu.Unlock()
		}
	})
	return h
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// record appends to the wire log, keeping the first 500 entries and the
// last 500 so a flooding stream cannot make a failure report unreadable.
func (h *pipeHost) record(s string) {
	h.mu.Lock()
	if len(h.log) >= 1000 {
		h.log = append(h.log[:500], h.log[501:]...)
		h.log[499] = "… (wire log elided)"
	}
	h.log = append(h.log, time.Now().Format("15:04:05.000")+" "+s)
	h.mu.Unlock()
}

func (h *pipeHost) send(raw string) {
	h.t.Helper()
	h.record(">> " + truncate(raw))
	if _, err := io.WriteString(h.in, raw); err != nil {
		h.t.Fatalf("write: %v", err)
	}
}

// sendRequest writes a request with the next integer id and returns the id.
func (h *pipeHost) sendRequest(method string, params any) int {
	h.t.Helper()
	id := h.nextID
	h.nextID++
	frame := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		frame["params"] = params
	}
	b, _ := json.Marshal(frame)
	h.send(string(b) + "\n")
	return id
}

func (h *pipeHost) call(method string, params any) map[string]any {
	h.t.Helper()
	return h.await(h.sendRequest(method, params))
}

func (h *pipeHost) notify(method string, params any) {
	h.t.Helper()
	frame := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		frame["params"] = params
	}
	b, _ := json.Marshal(frame)
	h.send(string(b) + "\n")
}

// next returns the next frame, failing after the timeout.
func (h *pipeHost) next(timeout time.Duration) map[string]any {
	h.t.Helper()
	select {
	case f, ok := <-h.frames:
		if !ok {
			h.t.Fatalf("stdout closed while waiting for a frame")
		}
		return f
	case <-time.After(timeout):
		h.t.Fatalf("no frame within %v", timeout)
	}
	return nil
}

// await returns the response with the given numeric id; other frames are
// kept in order of arrival in h.seen.
func (h *pipeHost) await(id int) map[string]any {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		f := h.next(time.Until(deadline))
		if got, ok := f["id"].(float64); ok && int(got) == id {
			return f
		}
	}
}

// expectSilence asserts that no frame arrives for d.
func (h *pipeHost) expectSilence(d time.Duration) {
	h.t.Helper()
	select {
	case f := <-h.frames:
		h.t.Fatalf("expected no frame, got %v", f)
	case <-time.After(d):
	}
}

func (h *pipeHost) initialize() map[string]any {
	h.t.Helper()
	resp := h.call("initialize", map[string]any{
		"protocol_version": "1.1.0",
		"host_info":        map[string]any{"name": "animus", "version": "0.6.33"},
		"capabilities":     map[string]any{"streaming": true, "progress": true, "cancellation": true},
	})
	if resp["error"] != nil {
		h.t.Fatalf("initialize failed: %v", resp["error"])
	}
	h.send(`{"jsonrpc":"2.0","method":"initialized"}` + "\n")
	return resp
}

// waitDone waits for Serve to return.
func (h *pipeHost) waitDone(timeout time.Duration) (time.Duration, error) {
	h.t.Helper()
	start := time.Now()
	select {
	case err := <-h.done:
		return time.Since(start), err
	case <-time.After(timeout):
		h.t.Fatalf("Serve did not return within %v", timeout)
	}
	return 0, nil
}

func errCode(t *testing.T, resp map[string]any) (int, string, string) {
	t.Helper()
	e, ok := resp["error"].(map[string]any)
	if !ok {
		t.Fatalf("expected an error response, got %v", resp)
	}
	cat := ""
	if d, ok := e["data"].(map[string]any); ok {
		cat, _ = d["category"].(string)
	}
	return int(e["code"].(float64)), e["message"].(string), cat
}

func result(t *testing.T, resp map[string]any) map[string]any {
	t.Helper()
	if resp["error"] != nil {
		t.Fatalf("unexpected error: %v", resp["error"])
	}
	r, _ := resp["result"].(map[string]any)
	return r
}
