package api

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakeDaemon is the daemon's side of the control socket
// (transport-http.md §1), in process: NDJSON JSON-RPC on a Unix socket,
// answering each connection's requests in order as the real daemon does.
// Every method answers its fixture (fixture, below) unless the test
// scripts it; streams answer the ack, their notifications and, when
// scripted, subscription/closed.
type fakeDaemon struct {
	path string

	mu       sync.Mutex
	script   map[string]reply // per method
	fallback *reply           // every unscripted method, when set
	calls    []call
	cancels  []json.RawMessage
	conns    int
}

// reply is how the fake answers one method.
type reply struct {
	result  json.RawMessage   // unary result or stream ack; the fixture when nil
	fault   *fault            // an error response instead
	drop    bool              // close the connection without answering
	stall   bool              // never answer (the connection stays open)
	garbage bool              // answer a line that is not JSON
	events  []json.RawMessage // stream notifications; the fixture's when nil
	early   bool              // send the notifications before the ack
	closed  string            // then subscription/closed with this reason; "" sends none
	bare    bool              // then subscription/closed without a reason
	hangup  bool              // then close the connection
}

type fault struct {
	code     int
	message  string
	category string // "" sends no data, as for -32601 and serde errors
}

type call struct {
	Method string
	Params json.RawMessage
}

// streamNotification is the notification a stream method sends.
func streamNotification(method string) (string, bool) {
	switch method {
	case "daemon/events":
		return "daemon/event", true
	case "daemon/logs":
		return "daemon/log", true
	case "workflow/events":
		return "workflow/event", true
	case "subject/watch":
		return "subject/changed", true
	}
	return "", false
}

// newFakeDaemon listens in a short temp dir: Unix socket paths are limited
// to 107 bytes and t.TempDir() can be longer.
func newFakeDaemon(t *testing.T) *fakeDaemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "api-")
	if err != nil {
		t.Fatal(err)
	}
	d := &fakeDaemon{path: filepath.Join(dir, "control.sock"), script: map[string]reply{}}
	ln, err := net.Listen("unix", d.path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		os.RemoveAll(dir)
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d.mu.Lock()
			d.conns++
			d.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				d.serve(c)
			}()
		}
	}()
	return d
}

func (d *fakeDaemon) set(method string, r reply) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.script[method] = r
}

func (d *fakeDaemon) setAll(r reply) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fallback = &r
}

func (d *fakeDaemon) replyFor(method string) reply {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r, ok := d.script[method]; ok {
		return r
	}
	if d.fallback != nil {
		return *d.fallback
	}
	return reply{}
}

// calls returns the requests received so far (not $/cancelRequest).
func (d *fakeDaemon) received() []call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]call(nil), d.calls...)
}

func (d *fakeDaemon) cancelled() []json.RawMessage {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]json.RawMessage(nil), d.cancels...)
}

// waitCancel waits for n $/cancelRequest notifications.
func (d *fakeDaemon) waitCancel(t *testing.T, n int) []json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if c := d.cancelled(); len(c) >= n {
			return c
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%d $/cancelRequest received, want %d", len(d.cancelled()), n)
	return nil
}

func (d *fakeDaemon) serve(c net.Conn) {
	in := bufio.NewReader(c)
	var wmu sync.Mutex
	write := func(line []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		_, _ = c.Write(append(line, '\n'))
	}
	out := func(v any) {
		b, _ := json.Marshal(v)
		write(b)
	}
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(line, &req) != nil {
			out(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": -32700, "message": "parse error"}})
			continue
		}
		d.mu.Lock()
		if req.Method == "$/cancelRequest" {
			d.cancels = append(d.cancels, req.Params)
			d.mu.Unlock()
			continue
		}
		d.calls = append(d.calls, call{Method: req.Method, Params: req.Params})
		d.mu.Unlock()
		if !d.answer(c, write, out, req.ID, req.Method) {
			return
		}
	}
}

// answer replies to one request; false means the connection is closed.
func (d *fakeDaemon) answer(c net.Conn, write func([]byte), out func(any), id json.RawMessage, method string) bool {
	r := d.replyFor(method)
	switch {
	case r.drop:
		c.Close()
		return false
	case r.stall:
		return true
	case r.garbage:
		write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{`))
		return true
	case r.fault != nil:
		e := map[string]any{"code": r.fault.code, "message": r.fault.message}
		if r.fault.category != "" {
			e["data"] = map[string]string{"category": r.fault.category}
		}
		out(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
		return true
	}
	notify, stream := streamNotification(method)
	if !stream {
		res := r.result
		if res == nil {
			res = fixture(method)
		}
		out(map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
		return true
	}
	events := r.events
	if events == nil {
		events = streamFixture(method)
	}
	sendEvents := func() {
		for _, ev := range events {
			out(map[string]any{"jsonrpc": "2.0", "method": notify, "params": map[string]any{"id": id, "data": ev}})
		}
	}
	ack := r.result
	if ack == nil {
		ack = json.RawMessage(`{"watching":true}`)
	}
	if r.early {
		sendEvents()
	}
	out(map[string]any{"jsonrpc": "2.0", "id": id, "result": ack})
	if !r.early {
		sendEvents()
	}
	if r.closed != "" {
		out(map[string]any{"jsonrpc": "2.0", "method": "subscription/closed", "params": map[string]any{"id": id, "reason": r.closed}})
	}
	if r.bare {
		out(map[string]any{"jsonrpc": "2.0", "method": "subscription/closed", "params": map[string]any{"id": id}})
	}
	if r.hangup {
		c.Close()
		return false
	}
	return true
}

// The fake daemon's answers, written from the reference's listings of the
// control protocol (transport-http.md §1.3, §1.4) and the published
// subject and log schemas, not from openapi.json: the response tests check
// the document against them, so they must not be derived from it.

const (
	fixtureSubject = `{"id":"task:T-1","kind":"task","title":"First task","status":"ready","priority":2,` +
		`"labels":["backend"],"assignee":"alice","created_at":"2030-01-01T00:00:00Z","updated_at":"2030-01-01T00:05:00Z",` +
		`"custom":{"points":3}}`
	fixturePlugin = `{"name":"animus-queue-sqlite","version":"0.1.0","kind":"queue","source":"animus-plugins/queue-sqlite",` +
		`"signature_verified":true,"description":"SQLite queue"}`
)

// fixture is the result the fake daemon answers a unary method with.
func fixture(method string) json.RawMessage {
	results := map[string]string{
		"daemon/status": `{"running":true,"pid":4242,"uptime_seconds":360,"version":"0.6.33","project_root":"/srv/project",` +
			`"log_path":"/srv/project/.animus/daemon.log"}`,
		"daemon/health": `{"status":"healthy","plugins":[{"name":"animus-queue-sqlite","kind":"queue","status":"healthy","uptime_ms":40},` +
			`{"name":"animus-subject-sqlite","kind":"subject_backend","status":"degraded","last_error":"slow"}]}`,
		"daemon/agents": `{"agents":[{"session_id":"s-1","provider":"claude","model":"sonnet","workflow_id":"wf-1",` +
			`"phase_id":"implement","started_at":"2030-01-01T00:00:00Z"}]}`,
		"daemon/metrics": `{"requests_total":12,"connections_total":3}`,
		"workflow/list": `{"runs":[{"id":"wf-1","definition":"standard","status":"running","subject_id":"task:T-1",` +
			`"started_at":"2030-01-01T00:00:00Z"},{"id":"wf-2","definition":"review","status":"completed",` +
			`"started_at":"2030-01-01T00:00:00Z","finished_at":"2030-01-01T01:00:00Z"}],"next_cursor":"c-2"}`,
		"workflow/get": `{"id":"wf-1","definition":"standard","status":"running","subject_id":"task:T-1",` +
			`"started_at":"2030-01-01T00:00:00Z","detail":{"phases":[{"id":"implement","status":"running"}]}}`,
		"workflow/run":     `{"workflow_id":"wf-101","status":"running","started_at":"2030-01-01T00:00:00Z"}`,
		"workflow/execute": `{"workflow_id":"wf-102","status":"pending","started_at":"2030-01-01T00:00:00Z"}`,
		"queue/list": `{"entries":[{"id":"q-1","subject_id":"task:T-1","status":"ready","priority":2,"enqueued_at":"2030-01-01T00:00:00Z"},` +
			`{"id":"q-2","subject_id":"task:T-3","status":"held","priority":3,"enqueued_at":"2030-01-01T00:00:00Z","hold_reason":"waiting"}],` +
			`"next_cursor":"q-c"}`,
		"queue/enqueue":  `{"id":"q-3","subject_id":"task:T-9","status":"ready","priority":1,"enqueued_at":"2030-01-01T00:00:00Z"}`,
		"queue/stats":    `{"ready":1,"held":1,"in_flight":2,"done_recent":4,"dropped_recent":0}`,
		"plugin/list":    `{"plugins":[` + fixturePlugin + `],"warnings":[{"plugin":"animus-old","message":"no manifest"}]}`,
		"plugin/status":  `{"protocol_version":"1.1.0","plugins":[{"name":"animus-queue-sqlite","state":"running"}]}`,
		"plugin/info":    fixturePlugin,
		"plugin/install": `{"plugin":` + fixturePlugin + `,"steps":["downloaded","verified","registered"]}`,
		"plugin/ping":    `{"ok":true,"latency_ms":3}`,
		"plugin/call":    `{"tasks":[{"id":"T-1"}],"raw":true}`,
		"plugin/search":  `{"entries":[{"name":"animus-transport-http","kind":"transport_backend","latest_version":"0.2.1"}]}`,
		"plugin/browse":  `{"entries":[{"name":"animus-queue-sqlite","kind":"queue","installed":true}]}`,
		"plugin/update":  `{"updates":[{"name":"animus-queue-sqlite","from_version":"0.1.0","to_version":"0.2.0","applied":false}]}`,
		"subject/list":   `{"subjects":[` + fixtureSubject + `],"next_cursor":"s-c","fetched_at":"2030-01-01T00:06:00Z"}`,
		"subject/get":    fixtureSubject,
		"subject/create": fixtureSubject,
		"subject/update": fixtureSubject,
		"subject/status": fixtureSubject,
		"subject/next":   `{"subject":` + fixtureSubject + `}`,
		"agent/run":      `{"session_id":"s-2","model":"sonnet","output":"done","usage":{"input_tokens":10}}`,
		"agent/status": `{"session_id":"s-1","status":"completed","provider":"claude","model":"sonnet",` +
			`"started_at":"2030-01-01T00:00:00Z","finished_at":"2030-01-01T00:10:00Z"}`,
	}
	if r, ok := results[method]; ok {
		return json.RawMessage(r)
	}
	return json.RawMessage(`{}`) // the unit result of every mutation
}

// streamFixture is what the fake daemon streams after a stream's ack.
func streamFixture(method string) []json.RawMessage {
	items := map[string][]string{
		"daemon/events": {
			`{"id":"evt-1","occurred_at":"2030-01-01T00:00:01Z","kind":"workflow_started","payload":{"workflow_id":"wf-1"}}`,
			`{"id":"evt-2","occurred_at":"2030-01-01T00:00:02Z","kind":"phase_completed","payload":{"phase":"implement"}}`,
		},
		"daemon/logs": {
			`{"id":"log-1","ts":"2030-01-01T00:00:01Z","level":"info","source":"daemon","target":"daemon.scheduler","message":"tick"}`,
			`{"id":"log-2","ts":"2030-01-01T00:00:02Z","level":"warn","source":"plugin","source_name":"animus-queue-sqlite",` +
				`"target":"plugin.animus-queue-sqlite","message":"slow lease","fields":{"ms":900}}`,
		},
		"workflow/events": {
			`{"workflow_id":"wf-1","kind":"phase_completed","payload":{"phase":"implement"},"occurred_at":"2030-01-01T00:00:03Z"}`,
		},
		"subject/watch": {
			`{"id":"task:T-1","change_kind":"status-changed","subject":` + fixtureSubject + `,"previous_native_status":"Todo"}`,
		},
	}
	var out []json.RawMessage
	for _, it := range items[method] {
		out = append(out, json.RawMessage(it))
	}
	return out
}
