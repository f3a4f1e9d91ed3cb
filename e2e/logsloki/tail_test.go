package logsloki

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// openTail sends log_storage/tail and returns the request id as sent.
func openTail(t testing.TB, h *fakehost.Host, q map[string]any) string {
	t.Helper()
	resp, err := h.Call(e2etest.Ctx(t, 15*time.Second), "log_storage/tail", q)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		t.Fatalf("tail: %d %s", resp.Error.Code, resp.Error.Message)
	}
	var ack struct {
		Tailing bool `json:"tailing"`
	}
	if json.Unmarshal(resp.Result, &ack) != nil || !ack.Tailing {
		t.Fatalf("tail ack %s", resp.Result)
	}
	return string(resp.ID)
}

// TestTailReplay: follow:false replays the matching backlog (newest limit,
// oldest first) as log_storage/event {id, entry} with the request id as
// sent, and then ends.
func TestTailReplay(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	h := b.start(nil)
	base := time.Now().Add(-time.Minute)
	for i := range 4 {
		store(t, h, b.entry(fmt.Sprint(i), base.Add(time.Duration(i)*time.Second), "info", "cli", "tail"))
	}
	id := openTail(t, h, map[string]any{"source_name": b.uniq, "limit": 3, "follow": false})
	got := b.ids(waitEvents(t, h, id, 3, 5*time.Second))
	if !sameList(got, []string{"1", "2", "3"}) {
		t.Fatalf("replayed %v, want [1 2 3]", got)
	}
	time.Sleep(300 * time.Millisecond)
	if es, _ := events(h, id); len(es) != 3 {
		t.Fatalf("follow:false sent %d events, want exactly 3", len(es))
	}
	// A string id comes back as the same string.
	resp, err := h.Request(e2etest.Ctx(t, 10*time.Second), json.RawMessage(`"tail-A"`), "log_storage/tail", map[string]any{"source_name": b.uniq, "limit": 1})
	if err != nil || resp.Error != nil {
		t.Fatalf("tail: %v %v", err, resp)
	}
	if got := b.ids(waitEvents(t, h, `"tail-A"`, 1, 5*time.Second)); !sameList(got, []string{"3"}) {
		t.Fatalf("string-id tail replayed %v, want [3]", got)
	}
}

// TestTailFollow streams live entries stored by another process, in ws
// and poll mode. In ws mode Loki then closes the tail (as after
// tail_max_duration): the plugin reconnects from the last seen timestamp
// and the replayed overlap is not sent twice.
func TestTailFollow(t *testing.T) {
	for _, mode := range []string{"ws", "poll"} {
		t.Run(mode, func(t *testing.T) {
			b := newBackend(t, fakeloki.Options{})
			env := map[string]string{"LOKI_TAIL_MODE": mode, "LOKI_TAIL_POLL_INTERVAL": "100ms"}
			h := b.start(env)
			writer := b.start(nil)
			store(t, writer, b.entry("before", time.Now().Add(-time.Second), "info", "daemon", "live"))
			id := openTail(t, h, map[string]any{"source_name": b.uniq, "follow": true})
			waitEvents(t, h, id, 1, 5*time.Second)
			store(t, writer, b.entry("live1", time.Now(), "warn", "daemon", "live"))
			waitEvents(t, h, id, 2, 5*time.Second)
			if mode == "ws" && b.fake != nil {
				if n := b.fake.CloseTails(); n != 1 {
					t.Fatalf("%d open tails, want 1", n)
				}
				deadline := time.Now().Add(5 * time.Second)
				for b.fake.OpenTails() == 0 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if b.fake.OpenTails() != 1 {
					t.Fatal("the plugin did not reconnect its tail")
				}
			}
			store(t, writer, b.entry("live2", time.Now(), "info", "daemon", "live"))
			waitEvents(t, h, id, 3, 5*time.Second)
			time.Sleep(300 * time.Millisecond) // room for a duplicate to show up
			got := b.ids(mustEvents(t, h, id))
			if !sameList(got, []string{"before", "live1", "live2"}) {
				t.Fatalf("tail sent %v, want [before live1 live2] once each", got)
			}
			// Entries of another filter never reach this tail.
			other := b.entry("other", time.Now(), "info", "daemon", "live")
			sn := "not-this-tail"
			other.SourceName = &sn
			store(t, writer, other)
			time.Sleep(300 * time.Millisecond)
			if n := len(mustEvents(t, h, id)); n != 3 {
				t.Fatalf("tail sent %d events after a non-matching store, want 3", n)
			}
			// $/cancelRequest for the tail's id, long after its ack, stops
			// the stream: the websocket closes and matching entries no
			// longer arrive. The notification itself is never answered.
			if err := h.Notify("$/cancelRequest", map[string]any{"id": json.RawMessage(id)}); err != nil {
				t.Fatal(err)
			}
			if mode == "ws" && b.fake != nil {
				deadline := time.Now().Add(5 * time.Second)
				for b.fake.OpenTails() != 0 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if n := b.fake.OpenTails(); n != 0 {
					t.Fatalf("%d tails still open after $/cancelRequest", n)
				}
			}
			time.Sleep(200 * time.Millisecond) // let the poll loop notice too
			store(t, writer, b.entry("after-cancel", time.Now(), "info", "daemon", "live"))
			time.Sleep(300 * time.Millisecond)
			if n := len(mustEvents(t, h, id)); n != 3 {
				t.Fatalf("tail sent %d events after $/cancelRequest, want still 3", n)
			}
		})
	}
}

func mustEvents(t testing.TB, h *fakehost.Host, id string) []logEntry {
	t.Helper()
	es, errs := events(h, id)
	if len(errs) > 0 {
		t.Fatalf("tail error: %s", errs[0])
	}
	return es
}

// TestTailErrorEndsTail: when Loki goes away for good, a live tail sends
// one {id, error} notification and stops.
func TestTailErrorEndsTail(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	b.needFake("stopping Loki")
	h := b.start(nil)
	id := openTail(t, h, map[string]any{"source_name": b.uniq, "follow": true})
	b.fake.Close()
	deadline := time.Now().Add(10 * time.Second)
	var errs []json.RawMessage
	for len(errs) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		_, errs = events(h, id)
	}
	if len(errs) != 1 {
		t.Fatalf("%d error notifications, want 1", len(errs))
	}
	var e struct {
		Code    int               `json:"code"`
		Message string            `json:"message"`
		Data    map[string]string `json:"data"`
	}
	if err := json.Unmarshal(errs[0], &e); err != nil || e.Code != -32603 || e.Data["category"] != "unavailable" {
		t.Fatalf("error notification %s", errs[0])
	}
	time.Sleep(500 * time.Millisecond)
	if _, errs = events(h, id); len(errs) != 1 {
		t.Fatalf("%d error notifications after the end, want 1", len(errs))
	}
}
