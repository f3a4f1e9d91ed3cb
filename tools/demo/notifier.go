package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/webhooksig"
)

// notifierScript walks animus-notifier-webhook through a daemon's day: a
// signed delivery to a webhook and a Slack message, a receiver outage
// ridden out by the outbox, a rejected delivery dead-lettered and
// replayed, a duplicate event ignored, and a clean stop.
func notifierScript() Script {
	return Script{
		Binary: "animus-notifier-webhook",
		Kind:   "notifier",
		Title:  "animus-notifier-webhook: daemon events to webhooks, durably",
		Run:    runNotifier,
	}
}

const demoSecret = "whsec_ZGVtby1zaWduaW5nLWtleS1mb3ItYW5pbXVz"

// webhookReceiver is a webhook endpoint on 127.0.0.1 that checks each
// request's Standard Webhooks signature with webhooksig, the package the
// plugin publishes for Go receivers (its own tests pin it to the
// specification's test vector). It answers the status it is told to
// (answer); told none (0), 204 for a valid signature, else 401.
type webhookReceiver struct {
	srv    *httptest.Server
	secret string
	mu     sync.Mutex
	status int
	got    []webhookDelivery
}

type webhookDelivery struct {
	header   http.Header
	body     []byte
	verified bool
}

func newWebhookReceiver(secret string, status int) *webhookReceiver {
	r := &webhookReceiver{secret: secret, status: status}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		ok := err == nil && webhooksig.VerifyStandard(r.secret, req.Header, body, time.Now(), 0) == nil
		r.mu.Lock()
		r.got = append(r.got, webhookDelivery{req.Header.Clone(), body, ok})
		status := r.status
		r.mu.Unlock()
		switch {
		case status != 0:
			w.WriteHeader(status)
		case !ok:
			http.Error(w, "bad signature", http.StatusUnauthorized)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	return r
}

func (r *webhookReceiver) answer(status int) { r.mu.Lock(); r.status = status; r.mu.Unlock() }

// last returns the latest delivery and how many arrived.
func (r *webhookReceiver) last() (webhookDelivery, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		return webhookDelivery{header: http.Header{}}, 0
	}
	return r.got[len(r.got)-1], len(r.got)
}

type demoNotify struct {
	Accepted        bool `json:"accepted"`
	Delivered       int  `json:"delivered"`
	LifecycleEvents []struct {
		EventType string         `json:"event_type"`
		Data      map[string]any `json:"data"`
	} `json:"lifecycle_events"`
}

func (r demoNotify) types() string {
	var out []string
	for _, e := range r.LifecycleEvents {
		out = append(out, strings.TrimPrefix(e.EventType, "notification-delivery-"))
	}
	return strings.Join(out, ", ")
}

func runNotifier(ctx context.Context, d *Demo) (string, error) {
	hook, slack := newWebhookReceiver(demoSecret, 200), newWebhookReceiver(demoSecret, 200)
	defer hook.srv.Close()
	defer slack.srv.Close()
	root, err := os.MkdirTemp("", "notifier-demo-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(root)
	root, _ = filepath.EvalSymlinks(root)
	config := `{"schema":"animus.daemon-notification-config.v1","version":1,
		"connectors":[{"type":"webhook","id":"ops","url_env":"OPS_WEBHOOK_URL","signing_secret_env":"OPS_SIGNING_SECRET"},
			{"type":"slack_webhook","id":"team","webhook_url_env":"SLACK_WEBHOOK_URL","channel":"#animus"}],
		"subscriptions":[{"id":"all-to-ops","connector_id":"ops"},{"id":"workflows-to-slack","connector_id":"team","event_types":["workflow_*"]}],
		"retry_policy":{"max_attempts":5,"base_delay_secs":1,"max_delay_secs":2}}`
	if err := os.MkdirAll(filepath.Join(root, ".animus"), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, ".animus", "pm-config.json"), []byte(`{"notification_config":`+config+`}`), 0o600); err != nil {
		return "", err
	}

	d.Step("Discovery: `animus-notifier-webhook --manifest` under the notifier allowlist")
	m, err := fakehost.Probe(ctx, filepath.Join(d.BinDir, "animus-notifier-webhook"), fakehost.ProbeOptions{Allowlist: fakehost.AllowlistNarrow, Schemas: d.Schemas})
	if err != nil {
		return "", err
	}
	if err := d.Expect(m.PluginKind == "notifier", "kind %s, env_required %v", m.PluginKind, m.EnvNames()); err != nil {
		return "", err
	}

	d.Step("pm-config.json names secrets by variable (url_env, signing_secret_env, webhook_url_env); the daemon forwards exactly those")
	d.Say("%s", JSON(json.RawMessage(config)))
	h, err := d.Spawn(ctx, "animus-notifier-webhook", func(c *fakehost.Config) {
		c.Dir, c.EnvMode = root, fakehost.EnvDaemonNarrow
		c.Env = map[string]string{"HOME": root}
		c.Extra = map[string]string{"OPS_WEBHOOK_URL": hook.srv.URL + "/animus", "OPS_SIGNING_SECRET": demoSecret,
			"SLACK_WEBHOOK_URL": slack.srv.URL + "/services/T/B/x"}
	})
	if err != nil {
		return "", err
	}
	if _, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetNotifier}); err != nil {
		return "", err
	}
	d.Frames(h)

	event := func(id, typ string) map[string]any {
		return map[string]any{"event": map[string]any{"schema": "animus.daemon.event.v1", "id": id, "seq": 1,
			"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00"), "event_type": typ,
			"project_root": root, "data": map[string]any{"workflow_id": "wf-42"}}}
	}
	notify := func(id, typ string) (demoNotify, error) {
		var res demoNotify
		resp, err := d.Call(ctx, h, "notifier/notify", event(id, typ))
		if err == nil && resp.Error != nil {
			err = resp.Error
		}
		if err == nil {
			err = json.Unmarshal(resp.Result, &res)
		}
		return res, err
	}
	flushUntil := func(done func() bool) (int, error) {
		for tick := 1; tick <= 40; tick++ {
			if _, err := d.Call(ctx, h, "notifier/flush", json.RawMessage(`{}`)); err != nil {
				return tick, err
			}
			if done() {
				return tick, nil
			}
			time.Sleep(250 * time.Millisecond)
		}
		return 40, fmt.Errorf("not done after 40 flush ticks")
	}

	d.Step("notifier/notify: committed to the SQLite outbox, then sent at once to both connectors")
	res, err := notify("evt-1", "workflow_completed")
	if err != nil {
		return "", err
	}
	got, _ := hook.last()
	hdr := got.header
	if err := d.Expect(res.Delivered == 2 && got.verified && hdr.Get("Idempotency-Key") == hdr.Get("webhook-id"),
		"delivered %d; receiver verified the Standard Webhooks signature; Idempotency-Key = webhook-id = %s", res.Delivered, hdr.Get("webhook-id")); err != nil {
		return "", err
	}

	d.Step("The receiver goes down (503): the event waits in the outbox, flush {} every tick retries with backoff")
	hook.answer(503)
	res, err = notify("evt-2", "task-state-change")
	if err != nil {
		return "", err
	}
	_, before := hook.last()
	hook.answer(200)
	ticks, err := flushUntil(func() bool {
		got, n := hook.last()
		return n > before && got.verified && got.header.Get("X-Animus-Delivery-Attempt") == "2"
	})
	if err != nil {
		return "", err
	}
	got, _ = hook.last()
	hdr = got.header
	if err := d.Expect(strings.Contains(res.types(), "failed"), "notify reported [%s]; delivered on flush tick %d as attempt %s, same key %s",
		res.types(), ticks, hdr.Get("X-Animus-Delivery-Attempt"), hdr.Get("Idempotency-Key")); err != nil {
		return "", err
	}

	d.Step("A 400 is permanent: dead-lettered at once, health turns degraded, an operator replays it")
	hook.answer(400)
	if res, err = notify("evt-3", "task-state-change"); err != nil {
		return "", err
	}
	health, err := d.Call(ctx, h, "health/check", nil)
	if err != nil {
		return "", err
	}
	if err := d.Expect(strings.Contains(res.types(), "dead-lettered") && strings.Contains(string(health.Result), `"degraded"`),
		"notify reported [%s]; health degraded", res.types()); err != nil {
		return "", err
	}
	hook.answer(200)
	replay, err := d.Call(ctx, h, "notifier/replay_dead_letters", map[string]any{"all": true})
	if err != nil {
		return "", err
	}
	_, before = hook.last()
	if _, err := flushUntil(func() bool { got, n := hook.last(); return n > before && got.verified }); err != nil {
		return "", err
	}
	health, err = d.Call(ctx, h, "health/check", nil)
	if err != nil {
		return "", err
	}
	if err := d.Expect(replay.Error == nil && strings.Contains(string(health.Result), `"healthy"`), "replayed and delivered; health healthy again"); err != nil {
		return "", err
	}

	d.Step("The same event again (the daemon re-sent it): nothing is sent twice")
	_, before = hook.last()
	if res, err = notify("evt-1", "workflow_completed"); err != nil {
		return "", err
	}
	_, after := hook.last()
	if err := d.Expect(res.Accepted && res.Delivered == 0 && after == before, "accepted, delivered 0, receiver untouched"); err != nil {
		return "", err
	}

	d.Step("The daemon's shutdown ladder")
	rep, err := h.Shutdown(ctx, fakehost.LadderDaemon)
	d.Frames(h)
	if err != nil {
		return "", err
	}
	if err := d.Expect(rep.ExitedByItself && rep.ExitCode == 0, "exited by itself with code %d", rep.ExitCode); err != nil {
		return "", err
	}
	return "signed webhook + Slack delivery, outage ridden out, 400 dead-lettered and replayed, duplicate ignored, clean exit", nil
}
