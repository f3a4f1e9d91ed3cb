package logstore

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
)

// TestTailCannotOpen: a tail whose backlog query or websocket fails is
// answered with an error response (no ack, no events) and holds no
// buffer subscription afterwards.
func TestTailCannotOpen(t *testing.T) {
	for _, c := range []struct {
		name     string
		fault    func(f *fakeloki.Server)
		code     int
		category pluginkit.Category
		msg      string
	}{
		{"backlog query fails", func(f *fakeloki.Server) { f.FailPath(queryPath, 1, http.StatusInternalServerError, "querier down") },
			-32603, pluginkit.CategoryUnavailable, "backend unavailable: query: Loki answered 500: querier down"},
		{"websocket refused for the credentials", func(f *fakeloki.Server) { f.FailPath(tailPath, 1, http.StatusUnauthorized, "no org id") },
			-32603, pluginkit.CategoryUnavailable, "backend unavailable: tail: Loki refused the credentials (HTTP 401)"},
		{"websocket refused as a bad request", func(f *fakeloki.Server) { f.FailPath(tailPath, 1, http.StatusBadRequest, "parse error") },
			-32602, pluginkit.CategoryInvalidRequest, "tail rejected by Loki: Bad Request"},
		{"websocket tail limit reached", func(f *fakeloki.Server) {
			f.FailPath(tailPath, 1, http.StatusTooManyRequests, "max concurrent tail requests")
		},
			-32603, pluginkit.CategoryQuotaExceeded, "quota exceeded: tail: Too Many Requests"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newLoki(t)
			svc := New(testConfig(t, f.URL()))
			h := serve(t, svc)
			c.fault(f)
			h.send(`"t"`, "log_storage/tail", map[string]any{"follow": true})
			resp, _ := h.response(`"t"`)
			if resp.Error == nil || resp.Error.Code != c.code || resp.Error.Data["category"] != string(c.category) || resp.Error.Message != c.msg {
				t.Fatalf("response %s\nwant %d %s %q", resp.Raw, c.code, c.category, c.msg)
			}
			if n := subscribers(svc.buf); n != 0 {
				t.Fatalf("%d buffer subscribers left", n)
			}
			h.kit.Close() // every frame is out once the plugin stopped
			if n := len(events(t, h.frames(), `"t"`)); n != 0 {
				t.Fatalf("%d events for a refused tail", n)
			}
		})
	}
}

// TestTailLost: once acknowledged, a live tail that keeps failing to reach
// Loki ends with exactly one {id, error} notification carrying the same
// error object a response would (code, data.category, data.http_status),
// then stops.
func TestTailLost(t *testing.T) {
	for _, c := range []struct {
		mode  string
		fault func(f *fakeloki.Server)
		msg   string
		code  int
		cat   pluginkit.Category
	}{
		{"ws", func(f *fakeloki.Server) {
			f.FailPath(tailPath, -1, http.StatusServiceUnavailable, "Service Unavailable")
			f.CloseTails()
		}, "backend unavailable: tail: Loki answered 503: Service Unavailable", -32603, pluginkit.CategoryUnavailable},
		{"poll", func(f *fakeloki.Server) { f.FailPath(queryPath, -1, http.StatusBadGateway, "bad gateway") },
			"backend unavailable: tail: Loki answered 502: bad gateway", -32603, pluginkit.CategoryUnavailable},
		{"poll", func(f *fakeloki.Server) {
			f.FailPath(queryPath, -1, http.StatusTooManyRequests, "too many outstanding requests")
		},
			"quota exceeded: tail: too many outstanding requests", -32603, pluginkit.CategoryQuotaExceeded},
	} {
		t.Run(c.mode+"/"+c.msg, func(t *testing.T) {
			f := newLoki(t)
			svc := New(testConfig(t, f.URL(), config.EnvTailMode, c.mode, config.EnvTailPollInterval, "50ms"))
			h := serve(t, svc)
			id := h.start("log_storage/tail", map[string]any{"follow": true})
			if ack, _ := h.response(id); ack.Error != nil {
				t.Fatalf("ack %s", ack.Raw)
			}
			if c.mode == "ws" {
				waitUntil(t, "the websocket tail", func() bool { return f.OpenTails() == 1 })
			}
			c.fault(f)
			evs := h.awaitEvents(id, 1)
			e := evs[0].Error
			if evs[0].Entry != nil || e == nil || e.Code != c.code || e.Data["category"] != string(c.cat) || e.Message != c.msg {
				t.Fatalf("event %s", marshal(t, evs[0]))
			}
			if _, ok := e.Data["http_status"]; !ok {
				t.Errorf("data %v lacks http_status", e.Data)
			}
			waitUntil(t, "the tail to end", func() bool { return subscribers(svc.buf) == 0 })
			h.kit.Close()
			if n := len(events(t, h.frames(), id)); n != 1 {
				t.Fatalf("%d events, want the one error", n)
			}
		})
	}
}

// TestTailReconnects: when Loki closes the websocket (tail_max_duration),
// the tail reconnects from the last position minus an overlap, so entries
// written while it was away arrive, once, and live streaming resumes.
func TestTailReconnects(t *testing.T) {
	f := newLoki(t)
	other := New(testConfig(t, f.URL()))
	// A long request timeout keeps the held reconnection waiting for its
	// release however slow the machine, instead of timing out and retrying.
	h := serve(t, New(testConfig(t, f.URL(), config.EnvTimeout, "10m")))
	live := func(id string) map[string]any {
		return wireEntryOf(id, time.Now(), "warn", "workflow", "wf", "workflow.run", "")
	}
	id := h.start("log_storage/tail", map[string]any{"source": "workflow", "follow": true})
	if ack, _ := h.response(id); ack.Error != nil {
		t.Fatalf("ack %s", ack.Raw)
	}
	waitUntil(t, "the websocket tail", func() bool { return f.OpenTails() == 1 })
	mustStore(t, other, live("before"))
	h.awaitEvents(id, 1)

	// Hold the reconnection until an entry was written in the gap.
	release := f.HoldNext(tailPath)
	defer release()
	if n := f.CloseTails(); n != 1 {
		t.Fatalf("%d tails closed", n)
	}
	waitUntil(t, "the reconnection attempt", func() bool { return f.RequestsTo(tailPath) == 2 && f.OpenTails() == 0 })
	mustStore(t, other, live("gap"))
	release()
	h.awaitEvents(id, 2)
	waitUntil(t, "the new websocket tail", func() bool { return f.OpenTails() == 1 })
	mustStore(t, other, live("after"))
	// A frame reporting entries Loki dropped (the tail fell behind) is
	// logged; the tail goes on.
	f.DropTailEntries(1)
	mustStore(t, other, live("dropped"))
	mustStore(t, other, live("last"))
	evs := h.awaitEvents(id, 4)
	if got := eventIDs(evs); !reflect.DeepEqual(got, []string{"before", "gap", "after", "last"}) {
		t.Fatalf("events %v", got)
	}
	if !strings.Contains(h.kit.PluginLog(), "Loki dropped tail entries") {
		t.Errorf("the dropped entries were not logged; plugin log:\n%s", h.kit.PluginLog())
	}
	// The reconnection resumed near the last entry seen, not from the
	// tail's opening: it re-reads an overlap, not the whole history.
	before, _ := time.Parse(time.RFC3339Nano, evs[0].Entry.TS)
	if s := f.TailStarts(); len(s) != 2 || !s[1].After(s[0]) || s[1].After(before) {
		t.Fatalf("tail starts %v; first entry at %v", s, before)
	}
}

// TestLiveTailOffer: the Go-side check of every live entry: inside the
// tail's window (an explicit until bounds a live tail too), matching the
// filter, and not sent before.
func TestLiveTailOffer(t *testing.T) {
	svc := New(testConfig(t, "http://127.0.0.1:1"))
	now := time.Now()
	pl, err := svc.plan(QueryParams{
		MinLevel: sp("warn"), TargetGlob: sp("a.*"),
		Since: sp(now.Add(-time.Minute).Format(time.RFC3339Nano)), Until: sp(now.Add(time.Minute).Format(time.RFC3339Nano)),
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	lt := &liveTail{s: svc, pl: pl, seen: newSeenSet(10)}
	var sent []string
	emit := func(r record) bool { sent = append(sent, r.Entry.ID); return r.Entry.ID != "stop" }
	rec := func(id string, d time.Duration, level, target string) record {
		return record{NS: now.Add(d).UnixNano(), Entry: Entry{ID: id, Level: level, Source: "daemon", Target: target}}
	}
	for _, c := range []struct {
		r        record
		proceeds bool
	}{
		{rec("in", 0, "warn", "a.b"), true},
		{rec("in", time.Second, "warn", "a.b"), true}, // duplicate id: dropped
		{rec("too-early", -2*time.Minute, "error", "a.b"), true},
		{rec("at-until", time.Minute, "error", "a.b"), true},
		{rec("low-level", 0, "info", "a.b"), true},
		{rec("other-target", 0, "error", "a.b.c"), true},
		{rec("at-since", -time.Minute, "error", "a.c"), true},
		{rec("stop", 0, "error", "a.d"), false}, // the host is gone: stop
	} {
		if got := lt.offer(c.r, emit); got != c.proceeds {
			t.Errorf("offer(%s) = %v", c.r.Entry.ID, got)
		}
	}
	if want := []string{"in", "at-since", "stop"}; fmt.Sprint(sent) != fmt.Sprint(want) {
		t.Fatalf("sent %v, want %v", sent, want)
	}
}
