package notifierwebhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

func TestManifestAndSchema(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := fakehost.Probe(ctx, binary(t), fakehost.ProbeOptions{Allowlist: fakehost.AllowlistNarrow, Schemas: e2etest.Schemas(t)})
	if err != nil {
		t.Fatal(err)
	}
	if m.PluginKind != "notifier" || m.Name != binaryName {
		t.Fatalf("manifest %s", m.Raw)
	}
	env := strings.Join(m.EnvNames(), " ")
	for _, want := range []string{"ANIMUS_NOTIFIER_CONFIG", "ANIMUS_NOTIFIER_DB_PATH", "ANIMUS_WEBHOOK_URL", "ANIMUS_WEBHOOK_SECRET", "ANIMUS_PLUGIN_LOG_LEVEL"} {
		if !strings.Contains(env, want) {
			t.Errorf("env_required lacks %s: %s", want, env)
		}
	}
	p := newProject(t, "", nil)
	h := p.start(t)
	resp := e2etest.Request(t, h, "notifier/schema", json.RawMessage(`{}`))
	if resp.Error != nil || string(resp.Result) != `{"connector_kinds":["webhook","slack_webhook"],"supports_flush":true}` {
		t.Fatalf("notifier/schema: %s %v", resp.Result, resp.Error)
	}
	// No configuration anywhere: events are not accepted, and flush {}
	// (every tick, whatever supports_flush says) is a cheap no-op.
	if res := notify(t, h, p.event("e-0", "workflow_completed", `{}`)); res.Accepted || res.Delivered != 0 || res.LifecycleEvents == nil {
		t.Fatalf("notify without configuration: %+v", res)
	}
	if evs := flush(t, h); len(evs) != 0 {
		t.Fatalf("flush: %+v", evs)
	}
	e2etest.Shutdown(t, h, fakehost.LadderDaemon)
}

// TestSignedDeliveryWithForwardedSecrets: the secrets live in the daemon's
// environment and reach the plugin only because notification_config names
// them in *_env keys.
func TestSignedDeliveryWithForwardedSecrets(t *testing.T) {
	t.Parallel()
	hook := newReceiver(t, opsSecret, 200)
	slack := newReceiver(t, "", 200)
	config := `{"connectors":[
		{"type":"webhook","id":"ops","url_env":"OPS_WEBHOOK_URL","signing_secret_env":"OPS_SIGNING_SECRET",
		 "bearer_token_env":"OPS_TOKEN","headers_env":{"X-Team":"OPS_TEAM"}},
		{"type":"slack_webhook","id":"team","webhook_url_env":"SLACK_WEBHOOK_URL","channel":"#animus","username":"animus"}],
		"subscriptions":[{"id":"all-to-ops","connector_id":"ops"},{"id":"wf-to-slack","connector_id":"team","event_types":["workflow_*"]}]}`
	p := newProject(t, config, map[string]string{
		"OPS_WEBHOOK_URL": hook.url("/animus"), "OPS_SIGNING_SECRET": opsSecret, "OPS_TOKEN": "tok-e2e", "OPS_TEAM": "platform",
		"SLACK_WEBHOOK_URL": slack.url("/services/T/B/x"), "UNRELATED_SECRET": "must-not-be-forwarded",
	})
	if _, ok := p.options().Extra["UNRELATED_SECRET"]; ok {
		t.Fatal("forwarding reproduction is wrong")
	}
	h := p.start(t)
	res := notify(t, h, p.event("evt-1", "workflow_completed", `{"workflow_id":"wf-1"}`))
	if !res.Accepted || res.Delivered != 2 || typesOf(res.LifecycleEvents) != "enqueued,enqueued,sent,sent" {
		t.Fatalf("notify: %+v", res)
	}
	r := hook.requests()[0]
	if r.verifyErr != nil {
		t.Fatalf("signature: %v", r.verifyErr)
	}
	id := r.header.Get("webhook-id")
	checks := map[string]string{"Idempotency-Key": id, "X-Animus-Event-Id": "evt-1", "X-Animus-Delivery-Attempt": "1",
		"Authorization": "Bearer tok-e2e", "X-Team": "platform", "Content-Type": "application/json"}
	for k, v := range checks {
		if got := r.header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if !strings.HasPrefix(r.header.Get("User-Agent"), "animus-notifier-webhook/") {
		t.Errorf("User-Agent %q", r.header.Get("User-Agent"))
	}
	if !json.Valid(r.body) {
		t.Fatalf("webhook body is not JSON: %s", r.body)
	}
	if !strings.Contains(string(r.body), `"schema":"animus.daemon.notification-delivery.v1","delivery_id":"`+id+`","connector_id":"ops","subscription_id":"all-to-ops"`) {
		t.Errorf("webhook body %s", r.body)
	}
	if got := string(slack.requests()[0].body); !strings.HasPrefix(got, `{"text":"Animus daemon event 'workflow_completed' (delivery: `) ||
		!strings.HasSuffix(got, `, event: evt-1)","username":"animus","channel":"#animus"}`) {
		t.Errorf("slack body %s", got)
	}
	sent := res.LifecycleEvents[2]
	if sent.ProjectRoot != p.root || sent.Data["delivery_id"] != id || sent.Data["workflow_id"] != "wf-1" || sent.Data["task_id"] != nil {
		t.Errorf("sent lifecycle event %+v", sent)
	}
}

// TestScriptedReceivers: the status sequences the issue names.
func TestScriptedReceivers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		statuses   []int
		retryAfter string
		wantTypes  string // lifecycle events of notify and the flushes, in order
		check      func(t *testing.T, reqs []received)
	}{
		{"500 500 200 delivered once", []int{500, 500, 200}, "", "enqueued,failed,failed,sent", func(t *testing.T, reqs []received) {
			if len(reqs) != 3 {
				t.Fatalf("%d requests:\n%s", len(reqs), describe(reqs))
			}
			for i, r := range reqs {
				if r.header.Get("Idempotency-Key") != reqs[0].header.Get("Idempotency-Key") || r.header.Get("X-Animus-Delivery-Attempt") != fmt.Sprint(i+1) {
					t.Errorf("request %d: key %s attempt %s", i, r.header.Get("Idempotency-Key"), r.header.Get("X-Animus-Delivery-Attempt"))
				}
				if r.verifyErr != nil {
					t.Errorf("request %d signature: %v", i, r.verifyErr)
				}
			}
		}},
		{"400 dead-lettered once", []int{400}, "", "enqueued,failed,dead-lettered", func(t *testing.T, reqs []received) {
			if len(reqs) != 1 {
				t.Fatalf("a 400 was sent %d times", len(reqs))
			}
		}},
		{"429 Retry-After honoured", []int{429, 200}, "2", "enqueued,failed,sent", func(t *testing.T, reqs []received) {
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			if gap := reqs[1].at.Sub(reqs[0].at); gap < 1900*time.Millisecond {
				t.Fatalf("retried %v after a 429 with Retry-After: 2", gap)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, opsSecret, c.statuses...)
			rc.retryAfter = c.retryAfter
			p := newProject(t, webhookConfig(""), map[string]string{"OPS_WEBHOOK_URL": rc.url("/hook"), "OPS_SIGNING_SECRET": opsSecret})
			h := p.start(t)
			res := notify(t, h, p.event("evt-"+c.name, "task-state-change", `{"task_id":"T-1"}`))
			final := c.wantTypes[strings.LastIndex(c.wantTypes, ",")+1:]
			evs := tickUntil(t, h, res.LifecycleEvents, 200*time.Millisecond, 15*time.Second, func(evs []lifecycleEvent) bool {
				return strings.HasSuffix(typesOf(evs), final)
			})
			// A few more ticks: nothing else may go out.
			for range 3 {
				evs = append(evs, flush(t, h)...)
			}
			if got := typesOf(evs); got != c.wantTypes {
				t.Fatalf("lifecycle %s, want %s\n%s", got, c.wantTypes, describe(rc.requests()))
			}
			c.check(t, rc.requests())
		})
	}
}

func TestDeadLetterHealthAndReplay(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, opsSecret, 422)
	p := newProject(t, webhookConfig(""), map[string]string{"OPS_WEBHOOK_URL": rc.url("/hook"), "OPS_SIGNING_SECRET": opsSecret})
	h := p.start(t)
	res := notify(t, h, p.event("evt-dl", "workflow_failed", `{}`))
	if typesOf(res.LifecycleEvents) != "enqueued,failed,dead-lettered" {
		t.Fatalf("%+v", res)
	}
	var health struct {
		Status    string `json:"status"`
		LastError string `json:"last_error"`
	}
	resp := e2etest.Request(t, h, "health/check", nil)
	json.Unmarshal(resp.Result, &health)
	if health.Status != "degraded" || !strings.Contains(health.LastError, "HTTP 422") {
		t.Fatalf("health %s", resp.Result)
	}
	resp = e2etest.Request(t, h, "notifier/dead_letters", json.RawMessage(`{}`))
	var list struct {
		DeadLetters []struct {
			DeliveryID string `json:"delivery_id"`
			EventID    string `json:"event_id"`
		} `json:"dead_letters"`
		Total int `json:"total"`
	}
	if err := json.Unmarshal(resp.Result, &list); err != nil || list.Total != 1 || list.DeadLetters[0].EventID != "evt-dl" {
		t.Fatalf("dead letters %s", resp.Result)
	}
	// Bad replay params are a clear -32602, and the plugin keeps serving.
	resp = e2etest.Request(t, h, "notifier/replay_dead_letters", json.RawMessage(`{}`))
	if resp.Error == nil || resp.Error.Code != -32602 || resp.Error.Category() != "invalid_request" {
		t.Fatalf("empty replay: %s %v", resp.Result, resp.Error)
	}
	rc.setStatuses(200)
	resp = e2etest.Request(t, h, "notifier/replay_dead_letters", map[string]any{"delivery_ids": []string{list.DeadLetters[0].DeliveryID}})
	if resp.Error != nil || !strings.Contains(string(resp.Result), `"replayed":1`) {
		t.Fatalf("replay %s %v", resp.Result, resp.Error)
	}
	if evs := flush(t, h); typesOf(evs) != "sent" {
		t.Fatalf("flush after replay: %+v", evs)
	}
	got := rc.requests()
	if len(got) != 2 || got[1].header.Get("Idempotency-Key") != list.DeadLetters[0].DeliveryID || got[1].verifyErr != nil {
		t.Fatalf("replayed request:\n%s", describe(got))
	}
	resp = e2etest.Request(t, h, "health/check", nil)
	json.Unmarshal(resp.Result, &health)
	if health.Status != "healthy" {
		t.Fatalf("health after replay %s", resp.Result)
	}
}

func TestDedupAndLoopGuard(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, opsSecret, 200)
	p := newProject(t, webhookConfig(""), map[string]string{"OPS_WEBHOOK_URL": rc.url("/hook"), "OPS_SIGNING_SECRET": opsSecret})
	h := p.start(t)
	ev := p.event("evt-twice", "workflow_completed", `{}`)
	first := notify(t, h, ev)
	second := notify(t, h, ev)
	if first.Delivered != 1 || !second.Accepted || second.Delivered != 0 || len(second.LifecycleEvents) != 0 {
		t.Fatalf("first %+v second %+v", first, second)
	}
	// The daemon copies lifecycle events back as events; none of them may
	// go anywhere (the only connector is the one they are about).
	for _, lc := range first.LifecycleEvents {
		data, _ := json.Marshal(lc.Data)
		if res := notify(t, h, p.event("lc-"+lc.EventType, lc.EventType, string(data))); res.Accepted {
			t.Fatalf("lifecycle event %s was accepted: %+v", lc.EventType, res)
		}
	}
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("receiver saw %d requests", n)
	}
}

func TestBadInputKeepsServing(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, opsSecret, 200)
	p := newProject(t, webhookConfig(""), map[string]string{"OPS_WEBHOOK_URL": rc.url("/hook"), "OPS_SIGNING_SECRET": opsSecret})
	h := p.start(t)
	cases := []struct {
		method, params, field string
	}{
		{"notifier/notify", `{}`, "event"},
		{"notifier/notify", `{"event":{"id":"e","event_type":"x","data":{}}}`, "event.project_root"},
		{"notifier/notify", `{"event":{"id":"e","event_type":"","project_root":"/p","data":{}}}`, "event.event_type"},
		{"notifier/notify", `{"event":{"id":7,"event_type":"x","project_root":"/p","data":{}}}`, "event.id"},
		{"notifier/flush", `{"project_root":5}`, "project_root"},
		{"notifier/dead_letters", `{"limit":5000}`, ""},
	}
	for _, c := range cases {
		resp := e2etest.Request(t, h, c.method, json.RawMessage(c.params))
		if resp.Error == nil || resp.Error.Code != -32602 || resp.Error.Category() != "invalid_request" {
			t.Fatalf("%s %s: %s %v", c.method, c.params, resp.Result, resp.Error)
		}
		if c.field != "" && !strings.Contains(string(resp.Error.Data), `"field":"`+c.field+`"`) {
			t.Errorf("%s %s: error data %s does not name %s", c.method, c.params, resp.Error.Data, c.field)
		}
	}
	if res := notify(t, h, p.event("after", "x", `{}`)); res.Delivered != 1 {
		t.Fatalf("after bad input: %+v", res)
	}
}
