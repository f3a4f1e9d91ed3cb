package subjectsqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

type changed struct {
	ID                    string  `json:"id"`
	ChangeKind            string  `json:"change_kind"`
	Subject               subject `json:"subject"`
	PreviousNativeStatus  *string `json:"previous_native_status"`
	PreviousDispatchLabel *string `json:"previous_dispatch_label"`
}

// events returns the subject/changed events for the watch whose request
// id is watchID (compact JSON), each validated as SubjectChangedEvent.
func events(t *testing.T, h *fakehost.Host, watchID string) []changed {
	t.Helper()
	var out []changed
	for _, n := range h.Notifications() {
		if n.Method != "subject/changed" {
			continue
		}
		var p struct {
			ID    json.RawMessage `json:"id"`
			Event json.RawMessage `json:"event"`
		}
		if err := json.Unmarshal(n.Params, &p); err != nil {
			t.Fatalf("subject/changed params: %s", n.Params)
		}
		if string(p.ID) != watchID {
			continue
		}
		if err := schemas(t).Validate(schemacheck.SubjectProtocol, "SubjectChangedEvent", p.Event); err != nil {
			t.Fatalf("event is not a SubjectChangedEvent: %v\n%s", err, p.Event)
		}
		if bytes.Contains(p.Event, []byte("null")) {
			t.Fatalf("event carries a null field: %s", p.Event)
		}
		out = append(out, e2etest.Decode[changed](t, p.Event))
	}
	return out
}

func waitEvents(t *testing.T, h *fakehost.Host, watchID string, n int) []changed {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := events(t, h, watchID)
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) < n {
				t.Fatalf("watch %s: %d of %d events arrived", watchID, len(got), n)
			}
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func watch(t *testing.T, h *fakehost.Host, id, method string, params any) {
	t.Helper()
	resp, err := h.Request(e2etest.Ctx(t, 10*time.Second), json.RawMessage(id), method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if resp.Error != nil || string(resp.Result) != `{"watching":true}` {
		t.Fatalf("%s: %+v %s", method, resp.Error, resp.Result)
	}
}

// A write in process B shows on process A's watch, in commit order, with
// the watch request id echoed verbatim and the right change kinds and
// previous_* fields; filtered watches see only what matches.
func TestCrossProcessWatch(t *testing.T) {
	p := newProject(t, map[string]string{"ANIMUS_SQLITE_KINDS": "task,issue", "ANIMUS_SQLITE_WATCH_POLL_MS": "40",
		"ANIMUS_SQLITE_DISPATCH_HINTS": hintsEnv})
	a, b := p.start(), p.start()
	create(t, b, "task/create", map[string]any{"title": "before the watch"})
	watch(t, a, "100", "subject/watch", nil) // the daemon's form: no params
	watch(t, a, `"w-str"`, "subject/watch", map[string]any{"kind": "task", "filter": map[string]any{"status": []string{"blocked"}}})
	watch(t, a, "102", "issue/watch", map[string]any{})

	s := create(t, b, "task/create", map[string]any{"title": "watched", "native_status": "In Review"})
	create(t, b, "task/update", map[string]any{"id": s.ID, "patch": map[string]any{"native_status": "QA"}})
	create(t, b, "task/update", map[string]any{"id": s.ID, "patch": map[string]any{"comment": "hi"}})
	create(t, b, "task/status", map[string]any{"id": s.ID, "status": "blocked"})
	create(t, b, "task/update", map[string]any{"id": s.ID, "patch": map[string]any{"attachments_add": []map[string]any{{"id": "d", "kind": "document", "uri": "u"}}}})
	create(t, b, "task/update", map[string]any{"id": s.ID, "patch": map[string]any{"attachments_remove": []string{"d"}}})
	iss := create(t, b, "issue/create", map[string]any{"title": "an issue"})
	e2etest.Call(t, b, "task/delete", map[string]string{"id": s.ID})

	all := waitEvents(t, a, "100", 8)
	want := []struct{ kind, id, prevNative, prevLabel string }{
		{"created", s.ID, "", ""},
		{"dispatch-label-changed", s.ID, "In Review", "code-review"},
		{"updated", s.ID, "", ""},
		{"status-changed", s.ID, "QA", ""}, // the native status (and so the label) did not move
		{"attachment-added", s.ID, "", ""},
		{"attachment-removed", s.ID, "", ""},
		{"created", iss.ID, "", ""},
		{"deleted", s.ID, "", ""},
	}
	if len(all) != len(want) {
		t.Fatalf("got %d events, want %d", len(all), len(want))
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	for i, w := range want {
		e := all[i]
		if e.ChangeKind != w.kind || e.ID != w.id || e.Subject.ID != w.id || str(e.PreviousNativeStatus) != w.prevNative || str(e.PreviousDispatchLabel) != w.prevLabel {
			t.Errorf("event %d: %s %s prev_native=%q prev_label=%q; want %+v", i, e.ChangeKind, e.ID, str(e.PreviousNativeStatus), str(e.PreviousDispatchLabel), w)
		}
	}
	if all[1].Subject.Status != "in-progress" || *all[1].Subject.NativeStatus != "QA" || all[7].Subject.Status != "blocked" {
		t.Errorf("event subjects do not carry the new state: %+v / %+v", all[1].Subject, all[7].Subject)
	}

	// Filtered: task + blocked only (the status-changed, both attachment
	// events and the delete, all with the subject blocked).
	blocked := waitEvents(t, a, `"w-str"`, 4)
	var kinds []string
	for _, e := range blocked {
		kinds = append(kinds, e.ChangeKind)
	}
	if !slices.Equal(kinds, []string{"status-changed", "attachment-added", "attachment-removed", "deleted"}) {
		t.Errorf("filtered watch got %v", kinds)
	}
	if issues := waitEvents(t, a, "102", 1); len(issues) != 1 || issues[0].ID != iss.ID {
		t.Errorf("issue/watch got %+v", issues)
	}
	// B's own writes are not B's watch events: B has none.
	if n := len(events(t, b, "100")); n != 0 {
		t.Errorf("process B has %d events for a watch it never opened", n)
	}
}

// unwatch as a notification (the daemon's form) and as a request both stop
// delivery, and so does $/cancelRequest for the watch's id after its ack
// (pluginkit.Stream); a watch survives the others' ends.
func TestUnwatch(t *testing.T) {
	p := newProject(t, map[string]string{"ANIMUS_SQLITE_WATCH_POLL_MS": "40"})
	a, b := p.start(), p.start()
	watch(t, a, "7", "subject/watch", nil)
	watch(t, a, "8", "task/watch", nil)
	watch(t, a, "9", "subject/watch", map[string]any{})
	watch(t, a, "10", "subject/watch", nil)
	create(t, b, "task/create", map[string]any{"title": "one"})
	for _, id := range []string{"7", "8", "9", "10"} {
		waitEvents(t, a, id, 1)
	}

	if err := a.Notify("subject/unwatch", map[string]string{"watch_id": "7"}); err != nil {
		t.Fatal(err)
	}
	if raw := e2etest.Call(t, a, "task/unwatch", map[string]any{"watch_id": 8}); string(raw) != `{"ok":true}` {
		t.Fatalf("unwatch request: %s", raw)
	}
	if err := a.Notify("$/cancelRequest", map[string]int{"id": 10}); err != nil {
		t.Fatal(err)
	}
	// The notification has no reply to wait for: a later request on the
	// same connection is processed after it was read; give its worker a
	// moment before the next write.
	time.Sleep(50 * time.Millisecond)
	create(t, b, "task/create", map[string]any{"title": "two"})
	waitEvents(t, a, "9", 2)
	time.Sleep(200 * time.Millisecond) // several poll intervals
	if n := len(events(t, a, "7")); n != 1 {
		t.Errorf("watch 7 got %d events after unwatch (notification)", n)
	}
	if n := len(events(t, a, "8")); n != 1 {
		t.Errorf("watch 8 got %d events after unwatch (request)", n)
	}
	if n := len(events(t, a, "10")); n != 1 {
		t.Errorf("watch 10 got %d events after $/cancelRequest", n)
	}
}

// With a live watch the plugin still stops at once on the daemon's
// shutdown ladder, on its own, with exit code 0.
func TestShutdownWithLiveWatch(t *testing.T) {
	h := newProject(t, nil).start()
	watch(t, h, "5", "subject/watch", nil)
	rep, err := h.Shutdown(e2etest.Ctx(t, 10*time.Second), fakehost.LadderDaemon)
	if err != nil || !rep.ExitedByItself || rep.ExitCode != 0 || rep.ShutdownReply == nil || rep.ShutdownReply.Error != nil {
		t.Fatalf("shutdown: %+v %v", rep, err)
	}
	if rep.Elapsed > 2*time.Second {
		t.Fatalf("took %v", rep.Elapsed)
	}
}

// Watch events reach a daemon watch in the order the writes committed,
// whichever process made them.
func TestWatchOrderAcrossWriters(t *testing.T) {
	p := newProject(t, map[string]string{"ANIMUS_SQLITE_WATCH_POLL_MS": "30"})
	a, b, c := p.start(), p.start(), p.start()
	watch(t, a, "1000", "subject/watch", nil)
	var titles []string
	for i := range 30 {
		h := []*fakehost.Host{a, b, c}[i%3]
		title := fmt.Sprintf("w%02d", i)
		create(t, h, "task/create", map[string]any{"title": title})
		titles = append(titles, title)
	}
	got := waitEvents(t, a, "1000", 30)
	var order []string
	for _, e := range got {
		order = append(order, e.Subject.Title)
	}
	if !slices.Equal(order, titles) {
		t.Fatalf("order %s\nwant  %s", strings.Join(order, " "), strings.Join(titles, " "))
	}
}
