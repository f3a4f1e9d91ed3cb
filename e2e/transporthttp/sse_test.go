package transporthttp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

const eventWait = 5 * time.Second

func payload(n int) json.RawMessage {
	b, _ := json.Marshal(map[string]int{"n": n})
	return b
}

// dataN decodes the n of an event's payload.
func dataN(t *testing.T, ev sseEvent) int {
	t.Helper()
	var e struct {
		Payload struct {
			N int `json:"n"`
		} `json:"payload"`
	}
	if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
		t.Fatalf("event data %q: %v", ev.Data, err)
	}
	return e.Payload.N
}

// Daemon events arrive as SSE with resumable ids; a client that goes away
// has its stream cancelled ($/cancelRequest, socket closed); reconnecting
// with Last-Event-ID replays exactly what it missed, even among events that
// share a timestamp.
func TestSSEEventsReconnectWithLastEventID(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	s := g.openSSE("/api/v1/daemon/events", nil)
	if err := g.d.WaitStreams(e2etest.Ctx(t, eventWait), 1); err != nil {
		t.Fatal(err)
	}
	// Three events share one timestamp, so resuming by time alone would
	// either repeat or lose some.
	same := time.Now().UTC().Format(time.RFC3339Nano)
	var sent []fakedaemon.Event
	for i := 1; i <= 3; i++ {
		sent = append(sent, g.d.EmitEvent(fakedaemon.Event{Kind: "phase", OccurredAt: same, Payload: payload(i)}))
	}
	var lastID string
	for i := 1; i <= 2; i++ {
		ev, _ := s.next(t, eventWait)
		if ev.Event != "daemon-event" || dataN(t, ev) != i {
			t.Fatalf("event %d: %+v", i, ev)
		}
		if want := same + "|" + sent[i-1].ID; ev.ID != want {
			t.Fatalf("event id %q, want %q", ev.ID, want)
		}
		lastID = ev.ID
	}
	s.close() // the client goes away after event 2
	if err := g.d.WaitStreams(e2etest.Ctx(t, eventWait), 0); err != nil {
		t.Fatalf("the daemon stream outlived the client: %v", err)
	}
	if c := g.d.Cancels(); len(c) != 1 {
		t.Errorf("$/cancelRequest ids %v, want exactly one", c)
	}
	missed := g.d.EmitEvent(fakedaemon.Event{Kind: "phase", Payload: payload(4)})

	before := len(g.d.Requests())
	s2 := g.openSSE("/api/v1/daemon/events", map[string]string{"Last-Event-ID": lastID})
	for _, want := range []int{3, 4} {
		ev, _ := s2.next(t, eventWait)
		if dataN(t, ev) != want {
			t.Fatalf("after reconnect got n=%d, want %d (%+v)", dataN(t, ev), want, ev)
		}
	}
	req, _, err := g.d.WaitRequest(e2etest.Ctx(t, eventWait), "daemon/events", before)
	if err != nil {
		t.Fatal(err)
	}
	checkParams(t, "resumed daemon/events", req.Params, `{"since":"`+same+`"}`)
	live := g.d.EmitEvent(fakedaemon.Event{Kind: "phase", Payload: payload(5)})
	ev, _ := s2.next(t, eventWait)
	if dataN(t, ev) != 5 || !strings.HasSuffix(ev.ID, "|"+live.ID) || missed.ID == live.ID {
		t.Fatalf("live event after replay: %+v", ev)
	}
}

// Keep-alive comments flow while nothing happens.
func TestSSEKeepAlive(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}, config: map[string]any{"keepalive_ms": 100}})
	s := g.openSSE("/api/v1/daemon/events", nil)
	if err := g.d.WaitStreams(e2etest.Ctx(t, eventWait), 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(450 * time.Millisecond)
	g.d.EmitEvent(fakedaemon.Event{Kind: "k", Payload: payload(1)})
	_, comments := s.next(t, eventWait)
	if comments < 3 { // ": stream open" plus at least two keep-alives
		t.Errorf("%d comment lines before the event, want keep-alives every 100 ms", comments)
	}
}

// workflow/events: filters reach the daemon, subscription/closed becomes
// event: end and the response finishes.
func TestSSEWorkflowEventsEnd(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	s := g.openSSE("/api/v1/workflows/wf-1/events?kinds=phase_started,workflow_completed", nil)
	req, _, err := g.d.WaitRequest(e2etest.Ctx(t, eventWait), "workflow/events", 0)
	if err != nil {
		t.Fatal(err)
	}
	checkParams(t, "workflow/events", req.Params, `{"workflow_id":"wf-1","kinds":["phase_started","workflow_completed"]}`)
	if err := g.d.WaitStreams(e2etest.Ctx(t, eventWait), 1); err != nil {
		t.Fatal(err)
	}
	g.d.EmitWorkflowEvent(fakedaemon.WorkflowEvent{WorkflowID: "wf-2", Kind: "phase_started"})
	g.d.EmitWorkflowEvent(fakedaemon.WorkflowEvent{WorkflowID: "wf-1", Kind: "log_line"})
	g.d.EmitWorkflowEvent(fakedaemon.WorkflowEvent{WorkflowID: "wf-1", Kind: "phase_started", Payload: payload(7)})
	ev, _ := s.next(t, eventWait)
	if ev.Event != "workflow-event" || !strings.Contains(ev.Data, `"workflow_id":"wf-1"`) || ev.ID != "1" {
		t.Fatalf("workflow event: %+v", ev)
	}
	g.d.CloseWorkflowStreams("workflow completed")
	ev, _ = s.next(t, eventWait)
	if ev.Event != "end" || !strings.Contains(ev.Data, "workflow completed") {
		t.Fatalf("after subscription/closed: %+v, want event end", ev)
	}
	s.waitEOF(t, eventWait)
}

// A daemon without the workflow broadcaster answers the subscription with
// an error: the client gets the envelope with the honest status, not a
// stream.
func TestSSEWorkflowEventsUnavailable(t *testing.T) {
	for _, c := range []struct {
		mode   fakedaemon.WorkflowEventsMode
		status int
		code   string
	}{
		{fakedaemon.WorkflowEventsUnavailable, 503, "unavailable"},
		{fakedaemon.WorkflowEventsUnknown, 501, "unknown_method"},
	} {
		g := startGateway(t, setup{daemon: &fakedaemon.Options{WorkflowEvents: c.mode}})
		wantError(t, "workflow events", g.get("/api/v1/workflows/events"), c.status, "", c.code)
	}
}

// Notifications that the daemon sends before the ack are not lost: the
// subscription exists before the request is written.
func TestSSENotificationsBeforeAck(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{NotifyBeforeAck: true}})
	for i := 1; i <= 3; i++ {
		g.d.EmitLog(fakedaemon.LogEntry{Message: "history", Fields: payload(i)})
	}
	var batch []map[string]any
	wantOK(t, "finite logs", g.get("/api/v1/daemon/logs"), &batch)
	if len(batch) != 3 {
		t.Fatalf("finite logs batch has %d entries, want 3", len(batch))
	}
	s := g.openSSE("/api/v1/daemon/logs?follow=true", nil)
	for i := 1; i <= 3; i++ {
		ev, _ := s.next(t, eventWait)
		if ev.Event != "daemon-log" || !strings.Contains(ev.Data, `"history"`) {
			t.Fatalf("history entry %d: %+v", i, ev)
		}
	}
	g.d.EmitLog(fakedaemon.LogEntry{Message: "live"})
	if ev, _ := s.next(t, eventWait); !strings.Contains(ev.Data, `"live"`) {
		t.Fatalf("live entry: %+v", ev)
	}
}

// subject/watch relays subject/changed.
func TestSSESubjectWatch(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	s := g.openSSE("/api/v1/subjects/watch?kind=task", nil)
	if err := g.d.WaitStreams(e2etest.Ctx(t, eventWait), 1); err != nil {
		t.Fatal(err)
	}
	wantOK(t, "create", g.do(request{method: "POST", path: "/api/v1/subjects", body: map[string]string{"kind": "note", "title": "other kind"}}), nil)
	wantOK(t, "create", g.do(request{method: "POST", path: "/api/v1/subjects", body: map[string]string{"kind": "task", "title": "Watched"}}), nil)
	ev, _ := s.next(t, eventWait)
	if ev.Event != "subject-changed" || !strings.Contains(ev.Data, `"Watched"`) || !strings.Contains(ev.Data, `"created"`) {
		t.Fatalf("subject change: %+v", ev)
	}
}

// A daemon that dies under a stream ends it with event: error (reconnect
// later), not event: end (finished).
func TestSSEDaemonDies(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	s := g.openSSE("/api/v1/daemon/events", nil)
	if err := g.d.WaitStreams(e2etest.Ctx(t, eventWait), 1); err != nil {
		t.Fatal(err)
	}
	g.d.Close()
	ev, _ := s.next(t, eventWait)
	if ev.Event != "error" || !strings.Contains(ev.Data, "connection lost") {
		t.Fatalf("after the daemon died: %+v, want event error", ev)
	}
	s.waitEOF(t, eventWait)
	wantError(t, "a new stream with the daemon gone", g.get("/api/v1/daemon/events"), 503, "unavailable", "daemon_unreachable")
}

// max_streams bounds open streams.
func TestSSEStreamLimit(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}, config: map[string]any{"max_streams": 1}})
	g.openSSE("/api/v1/daemon/events", nil)
	wantError(t, "second stream", g.get("/api/v1/daemon/events"), 503, "unavailable", "too_many_streams")
}

// A stream outlives read_timeout_ms and write_timeout_ms: those bound
// reading a request and writing one frame, not a stream's life.
func TestSSEOutlivesServerTimeouts(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{},
		config: map[string]any{"read_timeout_ms": 300, "write_timeout_ms": 300, "keepalive_ms": 100}})
	s := g.openSSE("/api/v1/daemon/events", nil)
	if err := g.d.WaitStreams(e2etest.Ctx(t, eventWait), 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(900 * time.Millisecond)
	g.d.EmitEvent(fakedaemon.Event{Kind: "late", Payload: payload(1)})
	if ev, _ := s.next(t, eventWait); ev.Event != "daemon-event" {
		t.Fatalf("after 900 ms: %+v", ev)
	}
}
