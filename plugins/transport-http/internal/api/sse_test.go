package api

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func raws(items ...string) []json.RawMessage {
	out := []json.RawMessage{}
	for _, it := range items {
		out = append(out, json.RawMessage(it))
	}
	return out
}

// A finished stream: the preamble, one event per item with its id and
// name, and the way it ended.
func TestSSERelaysAStream(t *testing.T) {
	evt := func(id, at string) string {
		return `{"id":"` + id + `","occurred_at":"` + at + `","kind":"k","payload":{"n":1}}`
	}
	wfe := `{"workflow_id":"wf-1","kind":"phase_completed","payload":{},"occurred_at":"2030-01-01T00:00:03Z"}`
	cases := []struct {
		name, method, target string
		header               map[string]string
		reply                reply
		params               string
		want                 []sseEvent
	}{
		{name: "daemon events end with the daemon's reason", method: "daemon/events", target: "/api/v1/daemon/events",
			reply: reply{events: raws(evt("evt-1", "2030-01-01T00:00:01Z"), `{"pretty":true}`), closed: "done"}, params: `{}`,
			want: []sseEvent{
				{id: "2030-01-01T00:00:01Z|evt-1", event: "daemon-event", data: `{"id":"evt-1","occurred_at":"2030-01-01T00:00:01Z","kind":"k","payload":{"n":1}}`},
				{id: "2", event: "daemon-event", data: `{"pretty":true}`}, // no ts|id: the sequence number
				{event: "end", data: `{"reason":"done"}`},
			}},
		{name: "workflow events count; a bare close is stream ended", method: "workflow/events", target: "/api/v1/workflows/wf-1/events",
			reply: reply{events: raws(wfe, wfe), bare: true}, params: `{"workflow_id":"wf-1"}`,
			want: []sseEvent{{id: "1", event: "workflow-event", data: wfe}, {id: "2", event: "workflow-event", data: wfe},
				{event: "end", data: `{"reason":"stream ended"}`}}},
		{name: "items sent before the ack are kept", method: "subject/watch", target: "/api/v1/subjects/watch",
			reply: reply{events: raws(`{"a":1}`), early: true, closed: "bye"}, params: `{}`,
			want: []sseEvent{{id: "1", event: "subject-changed", data: `{"a":1}`}, {event: "end", data: `{"reason":"bye"}`}}},
		{name: "a lost connection is event error", method: "daemon/logs", target: "/api/v1/daemon/logs?follow=1",
			reply: reply{events: raws(`{"id":"l1","ts":"2030-01-01T00:00:01Z"}`), hangup: true}, params: `{"follow":true}`,
			want: []sseEvent{{id: "2030-01-01T00:00:01Z|l1", event: "daemon-log", data: `{"id":"l1","ts":"2030-01-01T00:00:01Z"}`},
				{event: "error", data: `{"reason":"daemon connection lost"}`}}},
		{name: "resume from Last-Event-ID skips what the client has", method: "daemon/events", target: "/api/v1/daemon/events?since=2029-01-01T00:00:00Z",
			header: map[string]string{"Last-Event-ID": "2030-01-01T00:00:01Z|evt-1"},
			reply: reply{events: raws(evt("evt-0", "2030-01-01T00:00:00Z"), evt("evt-1", "2030-01-01T00:00:01Z"),
				evt("evt-1b", "2030-01-01T00:00:01Z"), evt("evt-2", "2030-01-01T00:00:02Z")), closed: "done"},
			params: `{"since":"2030-01-01T00:00:01Z"}`,
			want: []sseEvent{
				{id: "2030-01-01T00:00:01Z|evt-1b", event: "daemon-event"}, {id: "2030-01-01T00:00:02Z|evt-2", event: "daemon-event"},
				{event: "end", data: `{"reason":"done"}`},
			}},
		{name: "resume from ?last_event_id", method: "daemon/logs", target: "/api/v1/daemon/logs?follow=true&last_event_id=2030-01-01T00:00:01Z|7",
			reply:  reply{events: raws(`{"id":7,"ts":"2030-01-01T00:00:01Z"}`, `{"id":8,"ts":"2030-01-01T00:00:01Z"}`), closed: "done"},
			params: `{"since":"2030-01-01T00:00:01Z","follow":true}`,
			want:   []sseEvent{{id: "2030-01-01T00:00:01Z|8", event: "daemon-log"}, {event: "end", data: `{"reason":"done"}`}}},
		{name: "workflow events cannot resume", method: "workflow/events", target: "/api/v1/workflows/events",
			header: map[string]string{"Last-Event-ID": "2030-01-01T00:00:01Z|evt-1"},
			reply:  reply{events: raws(wfe), closed: "done"}, params: `{}`,
			want: []sseEvent{{id: "1", event: "workflow-event", data: wfe}, {event: "end", data: `{"reason":"done"}`}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newFakeDaemon(t)
			d.set(c.method, c.reply)
			h := newHarness(t, Options{}, d)
			x := h.do(request{method: "GET", target: c.target, header: c.header})
			if x.status != 200 || x.header.Get("Content-Type") != "text/event-stream" || x.header.Get("X-Accel-Buffering") != "no" ||
				x.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %v %s", x.status, x.header, x.body)
			}
			if !strings.HasPrefix(string(x.body), "retry: 2000\n: stream open\n\n") {
				t.Errorf("preamble: %q", x.body)
			}
			got, _ := parseSSE(x.body)
			if len(got) != len(c.want) {
				t.Fatalf("events %+v, want %+v", got, c.want)
			}
			for i, w := range c.want {
				if got[i].id != w.id || got[i].event != w.event || (w.data != "" && got[i].data != w.data) {
					t.Errorf("event %d = %+v, want %+v", i, got[i], w)
				}
			}
			calls := d.received()
			if len(calls) != 1 || calls[0].Method != c.method || !jsonEqual(t, string(calls[0].Params), c.params) {
				t.Errorf("calls %+v, want %s %s", calls, c.method, c.params)
			}
		})
	}
}

// liveStream reads an open event stream as it arrives.
type liveStream struct {
	items  chan string // "event:<name> <data>" or "comment:<text>"
	cancel context.CancelFunc
}

func (h *harness) open(t *testing.T, target string) *liveStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", h.url+target, nil)
	resp, err := h.client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		resp.Body.Close()
		t.Fatalf("open %s: %d", target, resp.StatusCode)
	}
	ls := &liveStream{items: make(chan string, 64), cancel: cancel}
	go func() {
		defer close(ls.items)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var name string
		for sc.Scan() {
			switch line := sc.Text(); {
			case strings.HasPrefix(line, ": "):
				ls.items <- "comment:" + strings.TrimPrefix(line, ": ")
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ls.items <- "event:" + name + " " + strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	t.Cleanup(cancel)
	return ls
}

// openAlive opens target and waits for the stream's first keep-alive: a
// stream that is open and idle.
func (h *harness) openAlive(t *testing.T, target string) *liveStream {
	t.Helper()
	ls := h.open(t, target)
	if got := ls.next(t, "comment:keep-alive"); got == "" {
		t.Fatal("the stream ended without a keep-alive")
	}
	return ls
}

// next returns the next item that has prefix, skipping others; "" when
// the stream ended first.
func (ls *liveStream) next(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case it, ok := <-ls.items:
			if !ok {
				return ""
			}
			if strings.HasPrefix(it, prefix) {
				return it
			}
		case <-timeout:
			t.Fatalf("no %q within 5s", prefix)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An open stream sends keep-alives; a client that goes away cancels the
// daemon's stream with the request's id.
func TestSSEKeepAliveAndCancel(t *testing.T) {
	d := newFakeDaemon(t)
	d.set("subject/watch", reply{events: raws()})
	h := newHarness(t, Options{KeepAlive: 20 * time.Millisecond}, d)
	ls := h.openAlive(t, "/api/v1/subjects/watch?kind=task")
	if n := h.s.Streams(); n != 1 {
		t.Errorf("Streams() = %d, want 1", n)
	}
	ls.cancel()
	c := d.waitCancel(t, 1)
	if !jsonEqual(t, string(c[0]), `{"id":1}`) {
		t.Errorf("$/cancelRequest params %s", c[0])
	}
	waitFor(t, "the stream to be released", func() bool { return h.s.Streams() == 0 })
}

// max_streams bounds open streams; Stop ends the open ones with event end
// and refuses new ones. Both refusals are 503 envelopes.
func TestSSELimitAndShutdown(t *testing.T) {
	d := newFakeDaemon(t)
	d.set("daemon/events", reply{events: raws()})
	h := newHarness(t, Options{MaxStreams: 1}, d)
	sp := loadSpec(t, h.s)
	ls := h.open(t, "/api/v1/daemon/events")
	x := h.do(request{method: "GET", target: "/api/v1/workflows/events"})
	if e := x.wantErr(t, 503, "too_many_streams"); !strings.Contains(e.Message, "(1)") {
		t.Errorf("message %q", e.Message)
	}
	if err := sp.checkResponse(x); err != nil {
		t.Error(err)
	}
	h.s.Stop()
	h.s.Stop() // idempotent
	if got := ls.next(t, "event:"); got != `event:end {"reason":"transport shutting down"}` {
		t.Errorf("got %q", got)
	}
	if got := ls.next(t, "event:"); got != "" {
		t.Errorf("the stream went on after end: %q", got)
	}
	x = h.do(request{method: "GET", target: "/api/v1/subjects/watch"})
	x.wantErr(t, 503, "shutting_down")
	if err := sp.checkResponse(x); err != nil {
		t.Error(err)
	}
}

// The non-follow logs batch ends at its limit, at the stream's end, or
// when the daemon goes quiet (it sends no end marker).
func TestDaemonLogsBatch(t *testing.T) {
	entry := func(n string) string {
		return `{"id":"` + n + `","ts":"2030-01-01T00:00:0` + n + `Z","level":"info","source":"daemon","target":"t","message":"m"}`
	}
	cases := []struct {
		name   string
		target string
		reply  reply
		want   []string
		cancel bool // the batch's stream is cancelled (the daemon would keep it open)
	}{
		{"quiet daemon", "/api/v1/daemon/logs", reply{events: raws(entry("1"), entry("2"))}, []string{"1", "2"}, true},
		{"limit", "/api/v1/daemon/logs?limit=1", reply{events: raws(entry("1"), entry("2"))}, []string{"1"}, true},
		{"stream end", "/api/v1/daemon/logs", reply{events: raws(entry("1")), closed: "done"}, []string{"1"}, false},
		{"nothing", "/api/v1/daemon/logs", reply{events: raws(), closed: "done"}, []string{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newFakeDaemon(t)
			d.set("daemon/logs", c.reply)
			h := newHarness(t, Options{}, d)
			var got []struct{ ID string }
			h.do(request{method: "GET", target: c.target}).wantData(t, &got)
			ids := []string{}
			for _, g := range got {
				ids = append(ids, g.ID)
			}
			if strings.Join(ids, ",") != strings.Join(c.want, ",") {
				t.Errorf("entries %v, want %v", ids, c.want)
			}
			if c.cancel {
				d.waitCancel(t, 1)
			}
		})
	}
}

// A batch still waiting when its request's context ends is answered with
// that context's error.
func TestDaemonLogsBatchDeadline(t *testing.T) {
	d := newFakeDaemon(t)
	d.set("daemon/logs", reply{events: raws()})
	h := newHarness(t, Options{LogsIdle: 10 * time.Second}, d)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	entries, e := h.s.collect(ctx, "daemon/logs", params{}, 10)
	if entries != nil || e == nil || e.Status != http.StatusGatewayTimeout || e.Code != "daemon_timeout" {
		t.Errorf("collect = %v, %+v", entries, e)
	}
}
