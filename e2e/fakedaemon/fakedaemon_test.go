package fakedaemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// client is a raw NDJSON client: the fake is checked against the wire
// rules of transport-http.md §1 without any Go client in between.
type client struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, d *Daemon) *client {
	t.Helper()
	c, err := net.Dial("unix", d.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c, r: bufio.NewReader(c)}
}

func (c *client) send(line string) {
	c.t.Helper()
	if _, err := fmt.Fprintln(c.c, line); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) recv() map[string]json.RawMessage {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("frame %s: %v", line, err)
	}
	return m
}

func TestSocketMode(t *testing.T) {
	d := New(t, Options{})
	info, err := os.Stat(d.Path())
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 || info.Mode()&os.ModeSocket == 0 {
		t.Errorf("socket mode %v, want a 0700 socket", info.Mode())
	}
}

// Protocol-level errors: parse errors carry no id, unknown methods and bad
// params carry no data, category errors carry data.category and the §1.6
// prefix; requests without an id are answered without one.
func TestWireErrors(t *testing.T) {
	d := New(t, Options{})
	c := dialRaw(t, d)
	c.send(`{not json`)
	if m := c.recv(); m["id"] != nil || !strings.Contains(string(m["error"]), `-32700`) {
		t.Errorf("parse error: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"nope/nope"}`)
	if m := c.recv(); string(m["error"]) != `{"code":-32601,"message":"unknown control method: nope/nope"}` {
		t.Errorf("unknown method: %s", m["error"])
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"workflow/get","params":{"id":7}}`)
	if m := c.recv(); !strings.HasPrefix(string(m["error"]), `{"code":-32602,"message":"invalid params:`) || strings.Contains(string(m["error"]), "data") {
		t.Errorf("bad params: %s", m["error"])
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"workflow/get","params":{"id":"wf-9"}}`)
	if m := c.recv(); string(m["error"]) != `{"code":-32602,"data":{"category":"not_found"},"message":"not found: wf-9"}` {
		t.Errorf("not found: %s", m["error"])
	}
	c.send(`{"jsonrpc":"2.0","method":"daemon/status"}`)
	if m := c.recv(); m["id"] != nil || m["result"] == nil {
		t.Errorf("id-less request: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"subject/list","params":null}`)
	if m := c.recv(); !strings.Contains(string(m["error"]), `"invalid_request"`) {
		t.Errorf("subject/list without filter.kind: %s", m["error"])
	}
	c.send(`{"jsonrpc":"2.0","id":5,"method":"agent/run","params":{}}`)
	if m := c.recv(); !strings.Contains(string(m["error"]), `-32001`) {
		t.Errorf("agent/run: %s", m["error"])
	}
}

// One connection's unary requests are answered in order: a slow one holds
// up the next, while another connection is not held up.
func TestSequentialPerConnection(t *testing.T) {
	d := New(t, Options{})
	d.SetDelay("workflow/get", 300*time.Millisecond)
	a, b := dialRaw(t, d), dialRaw(t, d)
	start := time.Now()
	a.send(`{"jsonrpc":"2.0","id":1,"method":"workflow/get","params":{"id":"wf-1"}}`)
	a.send(`{"jsonrpc":"2.0","id":2,"method":"daemon/status"}`)
	b.send(`{"jsonrpc":"2.0","id":1,"method":"daemon/status"}`)
	if m := b.recv(); string(m["id"]) != "1" || time.Since(start) > 250*time.Millisecond {
		t.Errorf("other connection was held up: %v after %v", m, time.Since(start))
	}
	if m := a.recv(); string(m["id"]) != "1" {
		t.Errorf("first reply %s, want id 1", m["id"])
	}
	if m := a.recv(); string(m["id"]) != "2" || time.Since(start) < 300*time.Millisecond {
		t.Errorf("second reply %s after %v", m["id"], time.Since(start))
	}
}

// Streams: history before the ack with NotifyBeforeAck; params.id echoes
// the request id; a finite daemon/logs ends without a marker;
// $/cancelRequest matches the stringified id ("1" does not cancel 1); a
// second stream under the same id aborts the first; workflow/events ends
// with subscription/closed.
func TestStreams(t *testing.T) {
	d := New(t, Options{NotifyBeforeAck: true})
	d.EmitLog(LogEntry{Message: "old"})
	c := dialRaw(t, d)
	c.send(`{"jsonrpc":"2.0","id":7,"method":"daemon/logs","params":{"follow":false}}`)
	if m := c.recv(); string(m["method"]) != `"daemon/log"` || !strings.Contains(string(m["params"]), `"id":7`) {
		t.Fatalf("history first: %v", m)
	}
	if m := c.recv(); string(m["result"]) != `{"watching":true}` {
		t.Fatalf("then the ack: %v", m)
	}
	// The driver unregisters itself just after writing the ack: wait for
	// it rather than racing it.
	if err := d.WaitStreams(ctx(t), 0); err != nil {
		t.Errorf("a finite daemon/logs left a driver running: %v", err)
	}

	c.send(`{"jsonrpc":"2.0","id":1,"method":"daemon/events"}`)
	c.recv() // ack
	if err := d.WaitStreams(ctx(t), 1); err != nil {
		t.Fatal(err)
	}
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"1"}}`)
	time.Sleep(50 * time.Millisecond)
	if d.ActiveStreams() != 1 {
		t.Fatal(`$/cancelRequest with "1" cancelled the stream issued as 1`)
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"daemon/events"}`) // same id: aborts the first
	c.recv()
	if err := d.WaitStreams(ctx(t), 1); err != nil {
		t.Fatal(err)
	}
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)
	if err := d.WaitStreams(ctx(t), 0); err != nil {
		t.Fatal(err)
	}

	c.send(`{"jsonrpc":"2.0","id":9,"method":"workflow/events","params":{"workflow_id":"wf-1"}}`)
	c.recv()
	if err := d.WaitStreams(ctx(t), 1); err != nil {
		t.Fatal(err)
	}
	d.EmitWorkflowEvent(WorkflowEvent{WorkflowID: "wf-2", Kind: "x"})
	d.EmitWorkflowEvent(WorkflowEvent{WorkflowID: "wf-1", Kind: "y"})
	if m := c.recv(); !strings.Contains(string(m["params"]), `"workflow_id":"wf-1"`) {
		t.Fatalf("filtered workflow event: %v", m)
	}
	d.CloseWorkflowStreams("bye")
	if m := c.recv(); string(m["method"]) != `"subscription/closed"` || string(m["params"]) != `{"id":9,"reason":"bye"}` {
		t.Fatalf("close: %v", m)
	}
}

func TestWorkflowEventsModes(t *testing.T) {
	for mode, want := range map[WorkflowEventsMode]string{
		WorkflowEventsUnavailable: `"category":"unavailable"`,
		WorkflowEventsUnknown:     `-32601`,
	} {
		d := New(t, Options{WorkflowEvents: mode})
		c := dialRaw(t, d)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"workflow/events"}`)
		if m := c.recv(); !strings.Contains(string(m["error"]), want) {
			t.Errorf("mode %d: %s", mode, m["error"])
		}
	}
}

// Closing the connection aborts its streams.
func TestDisconnectAbortsStreams(t *testing.T) {
	d := New(t, Options{})
	c := dialRaw(t, d)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"daemon/events"}`)
	c.recv()
	if err := d.WaitStreams(ctx(t), 1); err != nil {
		t.Fatal(err)
	}
	c.c.Close()
	if err := d.WaitStreams(ctx(t), 0); err != nil {
		t.Fatal(err)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestSeedReplacesFixtures checks that Seed's state, not the fixtures, is
// what the control methods answer with.
func TestSeedReplacesFixtures(t *testing.T) {
	d := New(t, Options{})
	d.Seed(Snapshot{
		Workflows: []WorkflowRun{{ID: "wf-review-42", Definition: "review", Status: "completed", SubjectID: "task:01ABC", StartedAt: "2026-11-30T06:00:00Z"}},
		Queue: []QueueEntry{
			{ID: "e-1", SubjectID: "task::task:01DEF", Status: "ready", Priority: 2, EnqueuedAt: "2026-11-30T06:00:00Z"},
			{ID: "e-2", SubjectID: "task::task:01ABC", Status: "done", Priority: 3, EnqueuedAt: "2026-11-30T06:00:01Z"},
		},
		Subjects: []Subject{{ID: "task:01ABC", Kind: "task", Title: "Review PR #42", Status: "done"}},
		Plugins:  []PluginInfo{{Name: "animus-logs-loki", Version: "1.2.3", Kind: "log_storage_backend"}},
	})
	c := dialRaw(t, d)
	for _, tc := range []struct {
		name, req string
		want      []string // substrings of the result
		absent    []string
	}{
		{"stats count the seeded queue", `{"jsonrpc":"2.0","id":1,"method":"queue/stats"}`,
			[]string{`"ready":1`, `"done_recent":1`, `"held":0`}, nil},
		{"seeded subject is served", `{"jsonrpc":"2.0","id":2,"method":"subject/get","params":{"id":"task:01ABC"}}`,
			[]string{`"title":"Review PR #42"`, `"status":"done"`}, nil},
		{"fixture subject is gone", `{"jsonrpc":"2.0","id":3,"method":"subject/get","params":{"id":"task:T-1"}}`,
			[]string{`"not_found"`}, nil},
		{"workflows are the seeded ones only", `{"jsonrpc":"2.0","id":4,"method":"workflow/list"}`,
			[]string{`"wf-review-42"`}, []string{`"wf-1"`, `"wf-3"`}},
		{"plugins replaced", `{"jsonrpc":"2.0","id":5,"method":"plugin/list"}`,
			[]string{`"animus-logs-loki"`}, []string{`"animus-queue-sqlite"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.send(tc.req)
			m := c.recv()
			raw, _ := json.Marshal(m)
			for _, w := range tc.want {
				if !strings.Contains(string(raw), w) {
					t.Errorf("%s lacks %s", raw, w)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(string(raw), a) {
					t.Errorf("%s still holds %s", raw, a)
				}
			}
		})
	}
}
