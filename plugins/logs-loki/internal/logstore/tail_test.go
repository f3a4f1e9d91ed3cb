package logstore

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
)

// conformanceFilter is the filter the official conformance suite tails
// with, plus follow and limit.
func conformanceFilter(target string, limit int, follow bool) map[string]any {
	return map[string]any{"source_name": "log-storage-conformance", "target_glob": target, "limit": limit, "follow": follow}
}

// TestTailReplay: follow:false answers {"tailing":true}, then replays the
// newest limit matches oldest first as log_storage/event notifications
// carrying the request id exactly as sent (number or string), then stops.
// The backlog comes from Loki for another process's entries and from the
// buffer for this process's own while Loki lags.
func TestTailReplay(t *testing.T) {
	t0 := base()
	var entries []map[string]any
	for i := range 4 {
		entries = append(entries, wireEntryOf(fmt.Sprint("t", i), t0.Add(time.Duration(i)*time.Second),
			"info", "plugin", "log-storage-conformance", "testkit.log_storage.abc", ""))
	}
	entries = append(entries,
		wireEntryOf("other-name", t0.Add(5*time.Second), "info", "plugin", "someone-else", "testkit.log_storage.abc", ""),
		wireEntryOf("other-target", t0.Add(6*time.Second), "info", "plugin", "log-storage-conformance", "testkit.log_storage.abc.sub", ""))
	for _, c := range []struct {
		name, id string
		own      bool // the tailing process stored the entries and Loki lags
	}{
		{"numeric id, entries from Loki", "3", false},
		{"string id, entries from Loki", `"tail-1"`, false},
		{"large numeric id, own entries from the buffer", "9007199254740993", true},
		{"string id, own entries from the buffer", `"x\"y"`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newLoki(t)
			h := serve(t, New(testConfig(t, f.URL())))
			if c.own {
				f.HoldIngestion()
				h.kit.OK(h.t, "log_storage/store", storeParams(t, entries...), nil)
			} else {
				mustStore(t, New(testConfig(t, f.URL())), entries...)
			}
			h.send(c.id, "log_storage/tail", conformanceFilter("testkit.log_storage.abc", 3, false))
			ack, ackAt := h.response(c.id)
			if ack.Error != nil || string(ack.Result) != `{"tailing":true}` {
				t.Fatalf("ack %s", ack.Raw)
			}
			h.awaitEvents(c.id, 3)
			h.kit.Close() // every frame is out once the plugin stopped
			frames := h.frames()
			evs := events(t, frames, c.id)
			if got := eventIDs(evs); !reflect.DeepEqual(got, []string{"t1", "t2", "t3"}) {
				t.Fatalf("events %v, want the newest three oldest first", got)
			}
			for i, fr := range frames {
				if fr.Method == "log_storage/event" && i < ackAt {
					t.Fatalf("event at frame %d, before the ack at %d", i, ackAt)
				}
			}
			if want := entries[1]; !sameJSON(t, evs[0].Entry, want) {
				t.Fatalf("event entry %s, want %s", marshal(t, evs[0].Entry), marshal(t, want))
			}
		})
	}
}

// TestTailFollow: follow:true replays the backlog, then streams live
// entries, this process's own (through the buffer) and other writers'
// (through Loki's websocket tail or polling), each exactly once and only
// if it matches.
func TestTailFollow(t *testing.T) {
	for _, mode := range []string{"ws", "poll"} {
		t.Run(mode, func(t *testing.T) {
			f := newLoki(t)
			env := []string{config.EnvTailMode, mode, config.EnvTailPollInterval, "50ms"}
			other := New(testConfig(t, f.URL(), env...))
			h := serve(t, New(testConfig(t, f.URL(), env...)))
			now := time.Now()
			live := func(id, sourceName string, d time.Duration) map[string]any {
				return wireEntryOf(id, now.Add(d), "info", "plugin", sourceName, "plugin.px.run", "")
			}
			mustStore(t, other, live("old", "px", -5*time.Second), live("old-other", "py", -4*time.Second))

			h.send(`"live"`, "log_storage/tail", map[string]any{"source_name": "px", "follow": true})
			if ack, _ := h.response(`"live"`); ack.Error != nil {
				t.Fatalf("ack %s", ack.Raw)
			}
			h.awaitEvents(`"live"`, 1)
			if mode == "ws" {
				waitUntil(t, "the websocket tail", func() bool { return f.OpenTails() == 1 })
			}
			h.kit.OK(h.t, "log_storage/store", storeParams(t, live("own", "px", time.Millisecond)), nil)
			h.awaitEvents(`"live"`, 2)
			mustStore(t, other, live("foreign-other", "py", 2*time.Millisecond), live("foreign", "px", 3*time.Millisecond))
			evs := h.awaitEvents(`"live"`, 3)
			if got := eventIDs(evs); !reflect.DeepEqual(got, []string{"old", "own", "foreign"}) {
				t.Fatalf("events %v", got)
			}
			if mode == "ws" && f.RequestsTo(tailPath) != 1 {
				t.Errorf("%d websocket connections, want 1", f.RequestsTo(tailPath))
			}
		})
	}
}

// TestTailStops: a live tail ends when the host cancels it with
// $/cancelRequest after the ack, or when the plugin drains; either way
// its websocket closes and it leaves the buffer, so it emits nothing more.
func TestTailStops(t *testing.T) {
	for _, mode := range []string{"ws", "poll"} {
		for _, how := range []string{"cancel", "drain"} {
			t.Run(mode+"/"+how, func(t *testing.T) {
				f := newLoki(t)
				svc := New(testConfig(t, f.URL(), config.EnvTailMode, mode, config.EnvTailPollInterval, "50ms"))
				h := serve(t, svc)
				h.kit.OK(h.t, "log_storage/store", storeParams(t, wireEntryOf("before", time.Now(), "info", "cli", "", "cli", "")), nil)
				id := h.start("log_storage/tail", map[string]any{"follow": true})
				if ack, _ := h.response(id); ack.Error != nil {
					t.Fatalf("ack %s", ack.Raw)
				}
				// The first event proves the stream is running (and so
				// cancellable: pluginkit drops a $/cancelRequest that
				// lands between the ack and the stream's start).
				h.awaitEvents(id, 1)
				if mode == "ws" {
					waitUntil(t, "the websocket tail", func() bool { return f.OpenTails() == 1 })
				}
				if subscribers(svc.buf) != 1 {
					t.Fatalf("%d buffer subscribers while tailing", subscribers(svc.buf))
				}
				if how == "cancel" {
					h.cancel(id)
				} else {
					h.kit.Close()
				}
				waitUntil(t, "the tail to leave the buffer", func() bool { return subscribers(svc.buf) == 0 })
				waitUntil(t, "the websocket to close", func() bool { return f.OpenTails() == 0 })
				if how == "cancel" {
					// With no subscription and no websocket nothing can
					// emit; the plugin itself keeps serving.
					h.kit.OK(h.t, "log_storage/store", storeParams(t, wireEntryOf("after", time.Now(), "info", "cli", "", "cli", "")), nil)
					var q QueryResult
					h.kit.OK(h.t, "log_storage/query", map[string]any{}, &q)
					if !reflect.DeepEqual(ids(q.Entries), []string{"before", "after"}) {
						t.Fatalf("query %v", ids(q.Entries))
					}
					if got := eventIDs(events(t, h.frames(), id)); !reflect.DeepEqual(got, []string{"before"}) {
						t.Fatalf("events %v, want none after the cancel", got)
					}
				}
			})
		}
	}
}

// TestTailCancelledWhileOpening: a tail cancelled while its websocket is
// still being opened is answered -32002 and leaves neither a subscription
// nor a connection behind.
func TestTailCancelledWhileOpening(t *testing.T) {
	f := newLoki(t)
	// A long request timeout: the held dial must end by the cancel, not
	// by LOKI_TIMEOUT, however slow the machine.
	svc := New(testConfig(t, f.URL(), config.EnvTimeout, "10m"))
	h := serve(t, svc)
	release := f.HoldNext(tailPath)
	defer release()
	h.send(`"t"`, "log_storage/tail", map[string]any{"follow": true})
	waitUntil(t, "the websocket request", func() bool { return f.RequestsTo(tailPath) == 1 })
	h.cancel(`"t"`)
	resp, _ := h.response(`"t"`)
	if resp.Error == nil || resp.Error.Code != -32002 || resp.Error.Data["category"] != "cancelled" {
		t.Fatalf("response %s", resp.Raw)
	}
	waitUntil(t, "the subscription to go", func() bool { return subscribers(svc.buf) == 0 })
	release()
	if n := f.OpenTails(); n != 0 {
		t.Fatalf("%d websocket tails open", n)
	}
}

// TestTailPollBurst: a polling tail keeps up with a burst larger than one
// query_range page (Loki's 5000-entry cap) written within the overlap
// window: every entry arrives, and entries after the burst too.
func TestTailPollBurst(t *testing.T) {
	f := newLoki(t)
	h := serve(t, New(testConfig(t, f.URL(), config.EnvTailMode, "poll", config.EnvTailPollInterval, "200ms")))
	id := h.start("log_storage/tail", map[string]any{"source_name": "burst", "follow": true})
	if ack, _ := h.response(id); ack.Error != nil {
		t.Fatalf("ack %s", ack.Raw)
	}
	now := time.Now()
	burst := make([]map[string]any, maxLimit+100)
	for i := range burst {
		burst[i] = wireEntryOf(fmt.Sprintf("b%05d", i), now.Add(time.Duration(i)*time.Microsecond), "info", "plugin", "burst", "plugin.burst", "")
	}
	mustStore(t, New(testConfig(t, f.URL())), burst...)
	h.awaitCount(id, len(burst))
	mustStore(t, New(testConfig(t, f.URL())), wireEntryOf("after", time.Now(), "info", "plugin", "burst", "plugin.burst", ""))
	h.awaitCount(id, len(burst)+1)
}
