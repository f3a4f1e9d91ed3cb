package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/store"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/webhooksig"
)

func TestNotifyDeliversSynchronously(t *testing.T) {
	rc := newScripted(t, 200)
	h := newHarness(t, harnessOpts{config: webhookConfig(""), env: map[string]string{"OPS_URL": rc.URL + "/hook", "OPS_SECRET": "whsec_c2VjcmV0LWtleS1ieXRlcw=="}})
	res := h.notify(h.event("evt-1", "workflow_completed", `{"workflow_id":"wf-1","task_id":"T-9"}`))
	if !res.Accepted || res.Delivered != 1 || fmt.Sprint(types(res.LifecycleEvents)) != "[notification-delivery-enqueued notification-delivery-sent]" {
		t.Fatalf("result %+v", res)
	}
	sent := res.LifecycleEvents[1]
	wantID := DeliveryID(DeliveryKey("evt-1", "ops", "all"))
	if sent.ProjectRoot != h.project || sent.Data["delivery_id"] != wantID || sent.Data["attempts"] != 1 ||
		sent.Data["connector_id"] != "ops" || sent.Data["subscription_id"] != "all" || sent.Data["event_id"] != "evt-1" ||
		*(sent.Data["workflow_id"].(*string)) != "wf-1" || *(sent.Data["task_id"].(*string)) != "T-9" {
		t.Fatalf("sent event %+v", sent)
	}
	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if err := webhooksig.VerifyStandard("whsec_c2VjcmV0LWtleS1ieXRlcw==", r.header, r.body, h.clock.Now(), 0); err != nil {
		t.Errorf("signature: %v", err)
	}
	if r.header.Get("Idempotency-Key") != wantID || r.header.Get("Webhook-Id") != wantID || r.header.Get("User-Agent") != "animus-notifier-webhook/test" {
		t.Errorf("headers %v", r.header)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "delivery_id", "connector_id", "subscription_id", "event"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("body lacks %q: %s", k, r.body)
		}
	}
	if !strings.Contains(string(r.body), `"schema":"animus.daemon.notification-delivery.v1"`) ||
		!strings.Contains(string(r.body), `"event":{"id":"evt-1","seq":1,"timestamp":"2026-05-31T00:00:00.123456+00:00","event_type":"workflow_completed","project_root":"`+h.project+`","data":{"workflow_id":"wf-1","task_id":"T-9"}}`) {
		t.Errorf("body %s", r.body)
	}
}

// A notify answers once its row is committed, and records its successful
// outcome after answering (recordLater); Close waits for those records.
func TestNotifyRecordsSentAfterAnswering(t *testing.T) {
	rc := newScripted(t, 200)
	db := filepath.Join(t.TempDir(), "outbox.sqlite")
	h := newHarness(t, harnessOpts{config: webhookConfig(""), dbPath: db, env: map[string]string{"OPS_URL": rc.URL, "OPS_SECRET": "s3cret"}})
	other, err := store.Open(context.Background(), store.Options{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	const n = 20
	for i := range n {
		if res := h.notify(h.event("evt-"+itoa(i), "x", `{}`)); res.Delivered != 1 {
			t.Fatalf("notify %d: %+v", i, res)
		}
		c, err := other.Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c.Inflight+c.Sent != i+1 || c.Pending+c.Dead != 0 {
			t.Fatalf("after notify %d another connection sees %+v", i, c)
		}
	}
	if err := h.svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, err := other.Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c != (store.Counts{Sent: n}) {
		t.Fatalf("after Close: %+v, want %d sent", c, n)
	}
	if got := len(rc.requests()); got != n {
		t.Fatalf("receiver saw %d requests, want %d", got, n)
	}
}

func TestSlackPayload(t *testing.T) {
	rc := newScripted(t, 200)
	h := newHarness(t, harnessOpts{config: `{"connectors":[{"type":"slack_webhook","id":"team","webhook_url_env":"SLACK_URL","channel":"#animus","icon_emoji":":robot:"}],
		"subscriptions":[{"id":"s","connector_id":"team","event_types":["task-*"]}]}`, env: map[string]string{"SLACK_URL": rc.URL}})
	if res := h.notify(h.event("e-7", "workflow_completed", `{}`)); res.Accepted {
		t.Fatalf("task-* matched workflow_completed: %+v", res)
	}
	if res := h.notify(h.event("e-8", "task-state-change", `{}`)); res.Delivered != 1 {
		t.Fatalf("%+v", res)
	}
	want := fmt.Sprintf(`{"text":"Animus daemon event 'task-state-change' (delivery: %s, event: e-8)","channel":"#animus","icon_emoji":":robot:"}`,
		DeliveryID(DeliveryKey("e-8", "team", "s")))
	if got := string(rc.requests()[0].body); got != want {
		t.Fatalf("slack body\n got %s\nwant %s", got, want)
	}
}

func TestNotifyTwiceSendsOnce(t *testing.T) {
	rc := newScripted(t, 200)
	h := newHarness(t, harnessOpts{config: webhookConfig(""), env: map[string]string{"OPS_URL": rc.URL, "OPS_SECRET": "s3cret"}})
	ev := h.event("evt-dup", "x", `{}`)
	first := h.notify(ev)
	second := h.notify(ev)
	if first.Delivered != 1 || !second.Accepted || second.Delivered != 0 || len(second.LifecycleEvents) != 0 {
		t.Fatalf("first %+v second %+v", first, second)
	}
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("receiver saw %d requests for one event notified twice", n)
	}
}

func TestNoConfigAcceptsNothing(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	res := h.notify(h.event("e", "x", `{}`))
	if res.Accepted || res.Delivered != 0 || res.LifecycleEvents == nil || len(res.LifecycleEvents) != 0 {
		t.Fatalf("%+v", res)
	}
}

func TestQuickStart(t *testing.T) {
	rc := newScripted(t, 200)
	h := newHarness(t, harnessOpts{env: map[string]string{"ANIMUS_WEBHOOK_URL": rc.URL + "/in", "ANIMUS_WEBHOOK_SECRET": "quick-secret"}})
	if res := h.notify(h.event("e", "anything", `{}`)); res.Delivered != 1 {
		t.Fatalf("%+v", res)
	}
	r := rc.requests()[0]
	if err := webhooksig.VerifyStandard("quick-secret", r.header, r.body, h.clock.Now(), 0); err != nil {
		t.Fatal(err)
	}
}

func TestInvalidConfigFailsNotifyClearly(t *testing.T) {
	h := newHarness(t, harnessOpts{config: `{"connectors":[{"type":"webhook","id":"a"},{"type":"webhook","id":"a"}]}`})
	ev := h.event("e", "x", `{}`)
	_, err := h.svc.Notify(context.Background(), NotifyParams{Event: ev})
	var pe *pluginkit.Error
	if !errors.As(err, &pe) || pe.Category != pluginkit.CategoryUnavailable || !strings.Contains(pe.Message, `id "a" is used twice`) ||
		strings.Contains(pe.Message, h.project) {
		t.Fatalf("err = %v", err)
	}
}

func TestNotifyParamsValidate(t *testing.T) {
	root := "/p"
	empty := ""
	cases := []struct {
		name  string
		p     NotifyParams
		field string
	}{
		{"no event", NotifyParams{}, "event"},
		{"no id", NotifyParams{Event: &Event{EventType: "x", ProjectRoot: &root}}, "event.id"},
		{"no type", NotifyParams{Event: &Event{ID: "e", ProjectRoot: &root}}, "event.event_type"},
		{"no project", NotifyParams{Event: &Event{ID: "e", EventType: "x"}}, "event.project_root"},
		{"empty project", NotifyParams{Event: &Event{ID: "e", EventType: "x", ProjectRoot: &empty}}, "event.project_root"},
		{"ok, data defaults to null", NotifyParams{Event: &Event{ID: "e", EventType: "x", ProjectRoot: &root}}, ""},
	}
	for _, c := range cases {
		err := c.p.Validate()
		if c.field == "" {
			if err != nil || string(c.p.Event.Data) != "null" {
				t.Errorf("%s: %v %s", c.name, err, c.p.Event.Data)
			}
			continue
		}
		var pe *pluginkit.Error
		if !errors.As(err, &pe) || pe.Code != -32602 || pe.Data["field"] != c.field {
			t.Errorf("%s: err = %v, want -32602 naming %s", c.name, err, c.field)
		}
	}
}

// TestSyncAttemptIsBounded: a receiver that hangs costs notify its sync
// budget, not the daemon's 15 s, and the row stays pending.
func TestSyncAttemptIsBounded(t *testing.T) {
	rc := newScripted(t, 200)
	rc.setDelay(5 * time.Second)
	h := newHarness(t, harnessOpts{config: webhookConfig(""), env: map[string]string{"OPS_URL": rc.URL, "OPS_SECRET": "s3cret"},
		syncBudget: 300 * time.Millisecond})
	start := time.Now()
	res := h.notify(h.event("slow", "x", `{}`))
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("notify took %v with a 300ms sync budget", took)
	}
	if !res.Accepted || res.Delivered != 0 || fmt.Sprint(types(res.LifecycleEvents)) != "[notification-delivery-enqueued notification-delivery-failed]" {
		t.Fatalf("%+v", res)
	}
	if res.LifecycleEvents[1].Data["retriable"] != true {
		t.Fatalf("failed event %+v", res.LifecycleEvents[1])
	}
}

// TestBreakerStopsSyncAttempts: after three transient failures in a row,
// notify only enqueues for that connector; a flush that succeeds closes
// the breaker again.
func TestBreakerStopsSyncAttempts(t *testing.T) {
	rc := newScripted(t, 503)
	h := newHarness(t, harnessOpts{config: webhookConfig(""), env: map[string]string{"OPS_URL": rc.URL, "OPS_SECRET": "s3cret"}})
	for i := range 6 {
		res := h.notify(h.event("e"+itoa(i), "x", `{}`))
		if !res.Accepted {
			t.Fatal("not accepted")
		}
	}
	if n := len(rc.requests()); n != 3 {
		t.Fatalf("receiver saw %d requests, want 3 before the breaker opened", n)
	}
	rc.setStatuses(200)
	h.clock.Advance(time.Minute)
	h.flush()
	if n := len(rc.requests()); n != 9 {
		t.Fatalf("after the flush the receiver saw %d requests, want all 6 events once more (9)", n)
	}
	if res := h.notify(h.event("after", "x", `{}`)); res.Delivered != 1 {
		t.Fatalf("breaker did not close: %+v", res)
	}
}

// BenchmarkNotify runs notifier/notify in process (no stdio) against a
// local 204 receiver, quick-start configuration, signed.
func BenchmarkNotify(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	project := b.TempDir()
	env := map[string]string{
		"ANIMUS_WEBHOOK_URL":      srv.URL + "/hook",
		"ANIMUS_WEBHOOK_SECRET":   "whsec_YmVuY2htYXJrLXNpZ25pbmcta2V5",
		"ANIMUS_NOTIFIER_DB_PATH": filepath.Join(project, "o.sqlite"),
	}
	svc := New(Options{Version: "bench", Getenv: func(k string) string { return env[k] }, Home: b.TempDir()})
	if err := svc.Init(context.Background(), nil, initParams(b, project)); err != nil {
		b.Fatal(err)
	}
	defer svc.Close(context.Background())
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		id := "bench-" + strconv.Itoa(i)
		ev := &Event{Schema: "animus.daemon.event.v1", ID: id, Seq: uint64(i), Timestamp: "2026-05-31T00:00:00.123456+00:00",
			EventType: "workflow_completed", ProjectRoot: &project, Data: json.RawMessage(`{"workflow_id":"wf-1","phase":"review"}`)}
		res, err := svc.Notify(ctx, NotifyParams{Event: ev})
		if err != nil || res.Delivered != 1 {
			b.Fatalf("notify: %+v %v", res, err)
		}
	}
}

func initParams(tb testing.TB, project string) pluginkit.InitializeParams {
	raw, err := json.Marshal(map[string]string{"project_root": project})
	if err != nil {
		tb.Fatal(err)
	}
	return pluginkit.InitializeParams{InitExtensions: map[string]json.RawMessage{"project_binding": raw}}
}
