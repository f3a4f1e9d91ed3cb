package subjects

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// changed is a subject/changed notification's params.
type changed struct {
	ID    json.RawMessage `json:"id"`
	Event struct {
		ID                    string        `json:"id"`
		ChangeKind            string        `json:"change_kind"`
		Subject               model.Subject `json:"subject"`
		PreviousNativeStatus  *string       `json:"previous_native_status"`
		PreviousDispatchLabel *string       `json:"previous_dispatch_label"`
	} `json:"event"`
}

func (c changed) watch() string { return string(c.ID) }

// eventsUntil returns every subject/changed not returned before, in the
// order the plugin wrote them, up to and including the first for which
// until is true.
func (h *host) eventsUntil(until func(changed) bool) []changed {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	isEvent := func(f pluginkittest.Frame) bool { return f.Method == "subject/changed" }
	var out []changed
	for {
		f, next, err := h.WaitNotification(ctx, h.events, isEvent)
		if err != nil {
			h.t.Fatalf("after %d events: %v", len(out), err)
		}
		h.events = next
		var c changed
		if err := json.Unmarshal(f.Params, &c); err != nil {
			h.t.Fatalf("subject/changed params %s: %v", f.Params, err)
		}
		if out = append(out, c); until(c) {
			return out
		}
	}
}

// watch opens a watch and returns its request id once acknowledged.
func (h *host) watch(method string, params any) string {
	h.t.Helper()
	id, err := h.Request(method, params)
	h.must(err)
	if f := h.await(id); string(f.Result) != `{"watching":true}` {
		h.t.Fatalf("%s %v: %s %v, want {\"watching\":true}", method, params, f.Result, f.Error)
	}
	return string(id)
}

// fence creates a subject and returns every event up to the sentinel
// watch's event for it. The hub offers each event to every armed watcher
// before the next one, so once the fence arrives every event an earlier
// write caused for a watcher already armed (one that has had an event) is
// in the result. A watch arms just after its ack, so a fresh one may still
// catch up later: check those with a fence of their own (TestWatchFilters).
func (h *host) fence(sentinel string) []changed {
	h.t.Helper()
	s := create(h, "task/create", map[string]any{"title": "fence", "labels": []string{"fence"}})
	return h.eventsUntil(func(c changed) bool { return c.watch() == sentinel && c.Event.ID == s.ID })
}

// waitWatchers waits until the hub holds n watchers: the end of a watch
// by notification or cancellation is asynchronous.
func (h *host) waitWatchers(n int) {
	h.t.Helper()
	for deadline := time.Now().Add(waitFor); h.app.hub.Len() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			h.t.Fatalf("%d watchers, want %d", h.app.hub.Len(), n)
		}
	}
}

func forWatch(evs []changed, id string) []changed {
	return slices.DeleteFunc(slices.Clone(evs), func(c changed) bool { return c.watch() != id })
}

// Every kind of change arrives, in commit order, under the watch request's
// id, with the previous native status and dispatch label when known.
func TestWatchChangeKinds(t *testing.T) {
	h := start(t, twoKinds)
	w := h.watch("subject/watch", map[string]any{"kind": "task"})
	s := create(h, "task/create", map[string]any{"title": "watched"})
	create(h, "issue/create", map[string]any{"title": "not a task"})
	patch := func(p map[string]any) { ok[model.Subject](h, "task/update", map[string]any{"id": s.ID, "patch": p}) }
	patch(map[string]any{"labels_add": []string{"x"}})
	ok[model.Subject](h, "task/status", map[string]any{"id": s.ID, "status": "blocked"})
	patch(map[string]any{"native_status": "In Review"})
	patch(map[string]any{"native_status": "Parked", "status": "in-progress"})
	patch(map[string]any{"attachments_add": []map[string]any{{"id": "a", "kind": "url", "uri": "u"}}})
	patch(map[string]any{"attachments_remove": []string{"a"}})
	ok[okResult](h, "task/delete", map[string]any{"id": s.ID})

	evs := h.eventsUntil(func(c changed) bool { return c.Event.ChangeKind == "deleted" })
	type seen struct{ kind, prevNative, prevLabel string }
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	var got []seen
	for _, c := range evs {
		if c.watch() != w || c.Event.ID != s.ID || c.Event.Subject.ID != s.ID {
			t.Errorf("event %+v for watch %s", c, w)
		}
		got = append(got, seen{c.Event.ChangeKind, str(c.Event.PreviousNativeStatus), str(c.Event.PreviousDispatchLabel)})
	}
	want := []seen{
		{"created", "-", "-"},
		{"updated", "-", "-"},
		{"status-changed", "-", "-"},
		{"status-changed", "-", "-"},                           // the hint moved blocked to in-progress
		{"dispatch-label-changed", "In Review", "code-review"}, // same bucket, the label went away
		{"attachment-added", "-", "-"},
		{"attachment-removed", "-", "-"},
		{"deleted", "-", "-"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("events\n got %v\nwant %v", got, want)
	}
}

// No event overtakes its watch's ack, even when writes are pipelined
// behind the watch request.
func TestWatchAckComesFirst(t *testing.T) {
	h := start(t, nil)
	_, from := h.Frames(0)
	w, err := h.Request("task/watch", nil)
	h.must(err)
	first, err := h.Request("task/create", map[string]any{"title": "racing the ack"})
	h.must(err)
	// The kit keeps every frame in the order written: once both answers
	// are in, read that order back.
	h.await(w)
	h.await(first)
	frames, _ := h.Frames(from)
	acked := false
	for answered := 0; answered < 2; frames = frames[1:] {
		switch f := frames[0]; {
		case f.Method == "subject/changed":
			var c changed
			_ = json.Unmarshal(f.Params, &c)
			if c.watch() == string(w) && !acked {
				t.Fatalf("event before the ack: %s", f.Raw)
			}
		case string(f.ID) == string(w):
			acked, answered = string(f.Result) == `{"watching":true}`, answered+1
		case string(f.ID) == string(first):
			answered++
		}
	}
	// Whether the racing create was seen depends on who won; a write after
	// the ack always is.
	s := create(h, "task/create", map[string]any{"title": "after the ack"})
	h.eventsUntil(func(c changed) bool { return c.watch() == string(w) && c.Event.ID == s.ID })
}

// A watch sends only what its filter and kind scope match. Each watch gets
// events in commit order, so its own last match fences what came before.
func TestWatchFilters(t *testing.T) {
	h := start(t, twoKinds)
	blockedX := h.watch("task/watch", map[string]any{"filter": map[string]any{"status": "blocked", "labels_any": "x"}})
	issues := h.watch("subject/watch", map[string]any{"kind": []string{"issue", "epic"}})
	a := create(h, "task/create", map[string]any{"title": "a", "labels": []string{"x"}})
	b := create(h, "task/create", map[string]any{"title": "b", "labels": []string{"x"}, "status": "blocked"})
	create(h, "task/create", map[string]any{"title": "c", "labels": []string{"y"}, "status": "blocked"})
	i := create(h, "issue/create", map[string]any{"title": "i", "labels": []string{"x"}, "status": "blocked"})
	ok[model.Subject](h, "task/status", map[string]any{"id": a.ID, "status": "blocked"})
	lastTask := create(h, "task/create", map[string]any{"title": "last", "labels": []string{"x"}, "status": "blocked"})
	lastIssue := create(h, "issue/create", map[string]any{"title": "last"})
	pending := map[string]string{blockedX: lastTask.ID, issues: lastIssue.ID}
	evs := h.eventsUntil(func(c changed) bool {
		if pending[c.watch()] == c.Event.ID {
			delete(pending, c.watch())
		}
		return len(pending) == 0
	})

	for _, tc := range []struct {
		watch string
		want  []string
	}{
		{blockedX, []string{b.ID + " created", a.ID + " status-changed", lastTask.ID + " created"}},
		{issues, []string{i.ID + " created", lastIssue.ID + " created"}},
	} {
		var got []string
		for _, c := range forWatch(evs, tc.watch) {
			got = append(got, c.Event.ID+" "+c.Event.ChangeKind)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("watch %s: %v, want %v", tc.watch, got, tc.want)
		}
	}
}

// A watch whose scope can match nothing is acknowledged without a watcher.
func TestWatchOutOfScope(t *testing.T) {
	h := start(t, twoKinds)
	for _, tc := range []struct {
		method string
		params any
	}{
		{"task/watch", map[string]any{"kind": "issue"}},
		{"task/watch", map[string]any{"filter": map[string]any{"kind": "issue"}}},
		{"subject/watch", map[string]any{"kind": "epic", "filter": map[string]any{}}},
	} {
		h.watch(tc.method, tc.params)
		if n := h.app.hub.Len(); n != 0 {
			t.Errorf("%s %v: %d watchers, want none", tc.method, tc.params, n)
		}
	}
}

// Each way of ending a watch stops its events and leaves other watches
// alone; unwatch is idempotent.
func TestWatchEnds(t *testing.T) {
	h := start(t, nil)
	sentinel := h.watch("subject/watch", nil)
	for _, tc := range []struct {
		name string
		end  func(id string)
	}{
		{"unwatch with a string watch_id", func(id string) { unwatchOK(h, "subject/unwatch", map[string]any{"watch_id": id}) }},
		{"unwatch with a numeric watch_id", func(id string) { unwatchOK(h, "task/unwatch", map[string]any{"watch_id": json.RawMessage(id)}) }},
		{"unwatch with id", func(id string) { unwatchOK(h, "task/unwatch", map[string]any{"watch_id": nil, "id": id}) }},
		{"the daemon's unwatch notification", func(id string) { h.must(h.Notify("subject/unwatch", map[string]any{"watch_id": id})) }},
		{"the notification under a kind", func(id string) { h.must(h.Notify("task/unwatch", map[string]any{"watch_id": json.RawMessage(id)})) }},
		{"$/cancelRequest after the ack", func(id string) { h.must(h.Notify("$/cancelRequest", map[string]any{"id": json.RawMessage(id)})) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer h.use(t)()
			w := h.watch("task/watch", map[string]any{})
			live := create(h, "task/create", map[string]any{"title": "live"})
			h.eventsUntil(func(c changed) bool { return c.watch() == w && c.Event.ID == live.ID })
			tc.end(w)
			h.waitWatchers(1)
			create(h, "task/create", map[string]any{"title": "after the end"})
			if evs := h.fence(sentinel); len(forWatch(evs, w)) != 0 {
				t.Errorf("events after the end: %+v", forWatch(evs, w))
			}
			// Ending it again, or a watch that never was, is fine.
			unwatchOK(h, "subject/unwatch", map[string]any{"watch_id": w})
		})
	}
	if h.app.hub.Len() != 1 {
		t.Errorf("%d watchers at the end, want the sentinel only", h.app.hub.Len())
	}
}

func unwatchOK(h *host, method string, params map[string]any) {
	h.t.Helper()
	if res := h.OK(h.t, method, params, nil); string(res) != `{"ok":true}` {
		h.t.Fatalf("%s %v: %s", method, params, res)
	}
}

// A write by another process reaches the watch through the change log.
func TestWatchSeesOtherProcesses(t *testing.T) {
	h := start(t, map[string]string{envWatchPollMS: "10"})
	w := h.watch("task/watch", nil)
	other := h.openOther(t)
	native := ulid.Make().String()
	now := model.Time{Time: time.Now().UTC()}
	sub := &model.Subject{ID: "task:" + native, Kind: "task", Title: "from elsewhere", Status: model.Ready, CreatedAt: now, UpdatedAt: now}
	if _, err := other.Create(context.Background(), sub, native); err != nil {
		t.Fatal(err)
	}
	evs := h.eventsUntil(func(c changed) bool { return c.Event.ID == sub.ID })
	if got := evs[len(evs)-1]; got.watch() != w || got.Event.ChangeKind != "created" || got.Event.Subject.Title != "from elsewhere" {
		t.Errorf("event %+v", got)
	}
}
