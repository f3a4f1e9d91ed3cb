package conformance

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/webhooksig"
)

// NotifierSuite is the notifier kind's suite (kind key "notifier"). The
// official testkit has none (notifier-webhook.md, top), so these follow
// how the daemon's dispatcher calls a notifier (§2) and what the reference
// plugin already guarantees (§3): real receivers on 127.0.0.1 answering
// scripted status sequences, the reference's notification_config in
// pm-config.json, the *_env variables forwarded as the daemon forwards
// them. Every result is also checked against the notifier schemas. A
// plugin that does not sign skips the signature scenario.
func NotifierSuite() []Scenario {
	return []Scenario{
		{"notifier", "handshake", scenarioNotifierHandshake},
		{"notifier", "schema-shape", scenarioNotifierSchema},
		{"notifier", "flush-every-tick", scenarioNotifierFlushEmpty},
		{"notifier", "notify-delivers", scenarioNotifierDelivers},
		{"notifier", "standard-webhooks-signature", scenarioNotifierSignature},
		{"notifier", "retry-500-500-200", scenarioNotifierRetry},
		{"notifier", "permanent-400-dead-lettered", scenarioNotifierPermanent},
		{"notifier", "loop-guard", scenarioNotifierLoopGuard},
		{"notifier", "notify-needs-project-root", scenarioNotifierBadEvent},
	}
}

// NotifierWebhookSuite holds animus-notifier-webhook's own promises beyond
// the reference (notifier-webhook.md §3.9, §4): idempotency headers,
// Retry-After, and dedup that outlives delivery. The reference fails them
// by design, so they run only against this plugin.
func NotifierWebhookSuite() []Scenario {
	return []Scenario{
		{"notifier-webhook", "idempotency-headers", scenarioNotifierIdempotency},
		{"notifier-webhook", "retry-after-429", scenarioNotifierRetryAfter},
		{"notifier-webhook", "renotify-sends-once", scenarioNotifierRenotify},
	}
}

// scenarioNotifierHandshake: the notifier client's initialize (caps all
// false, project_binding, 5 s) is answered with plugin_kind "notifier"
// and notifier/notify advertised.
func scenarioNotifierHandshake(ctx context.Context, s *Session) Outcome {
	_, res, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetNotifier})
	if err != nil {
		return failf("%v", err)
	}
	if res.PluginInfo.PluginKind != "notifier" {
		return failf("plugin_kind = %q, want \"notifier\"", res.PluginInfo.PluginKind)
	}
	if !contains(res.Capabilities.Methods, "notifier/notify") {
		return failf("capabilities.methods lacks notifier/notify: %v", res.Capabilities.Methods)
	}
	return pass()
}

// scenarioNotifierSchema: notifier/schema answers a NotifierSchema whose
// supports_flush agrees with whether notifier/flush is advertised.
func scenarioNotifierSchema(ctx context.Context, s *Session) Outcome {
	if !s.Advertises("notifier/schema") {
		return skipf("plugin does not advertise notifier/schema (the dispatcher never calls it)")
	}
	h, _, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetNotifier})
	if err != nil {
		return failf("%v", err)
	}
	resp, err := call(ctx, h, shortCallBudget, "notifier/schema", json.RawMessage(`{}`))
	if err != nil {
		return failf("%v", err)
	}
	var sch struct {
		ConnectorKinds []string `json:"connector_kinds"`
		SupportsFlush  bool     `json:"supports_flush"`
	}
	if err := wantResult(resp, &sch); err != nil {
		return failf("%v", err)
	}
	if err := s.Schemas.Validate(schemacheck.NotifierProtocol, "NotifierSchema", resp.Result); err != nil {
		return failf("not a valid NotifierSchema: %v", err)
	}
	if sch.SupportsFlush != s.Advertises("notifier/flush") {
		return failf("supports_flush=%v but notifier/flush advertised=%v", sch.SupportsFlush, s.Advertises("notifier/flush"))
	}
	return pass()
}

// scenarioNotifierFlushEmpty: the daemon calls flush {} every tick whatever
// supports_flush says; with nothing configured it must still answer a
// valid NotifierFlushResult (or -32001 from a plugin without flush).
func scenarioNotifierFlushEmpty(ctx context.Context, s *Session) Outcome {
	h, _, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetNotifier})
	if err != nil {
		return failf("%v", err)
	}
	for range 3 {
		resp, err := call(ctx, h, notifierCallBudget, "notifier/flush", json.RawMessage(`{}`))
		if err != nil {
			return failf("%v", err)
		}
		if resp.Error != nil && resp.Error.Code == -32001 && !s.Advertises("notifier/flush") {
			return pass()
		}
		if err := wantResult(resp, nil); err != nil {
			return failf("%v", err)
		}
	}
	return pass()
}

// scenarioNotifierDelivers: one event reaches the receiver as the
// reference's delivery document; accepted is true and delivered is
// truthful (a synchronous success was seen by the receiver before the
// reply; otherwise flush ticks deliver it).
func scenarioNotifierDelivers(ctx context.Context, s *Session) Outcome {
	return withNotifier(ctx, s, "", []int{200}, func(h *fakehost.Host, p *notifierProject) Outcome {
		res, err := notifierNotify(ctx, h, p.event("conformance-1", "workflow_completed", map[string]any{"workflow_id": "wf-1"}))
		if err != nil {
			return failf("%v", err)
		}
		if !res.Accepted {
			return failf("accepted=false for an event a subscription matches")
		}
		if res.Delivered > p.recv.delivered() {
			return failf("delivered=%d but the receiver had accepted %d requests when notify answered", res.Delivered, p.recv.delivered())
		}
		if _, err := notifierTicks(ctx, h, 10*time.Second, func() bool { return p.recv.delivered() > 0 }); err != nil {
			return failf("%v", err)
		}
		reqs := p.recv.requests()
		if len(reqs) == 0 {
			return failf("the receiver saw no request")
		}
		var body struct {
			Schema     string `json:"schema"`
			DeliveryID string `json:"delivery_id"`
			Event      struct {
				ID        string `json:"id"`
				EventType string `json:"event_type"`
			} `json:"event"`
		}
		if err := json.Unmarshal(reqs[0].body, &body); err != nil {
			return failf("delivery body is not JSON: %v", err)
		}
		if body.Schema != "animus.daemon.notification-delivery.v1" || body.DeliveryID == "" || body.Event.ID != "conformance-1" ||
			body.Event.EventType != "workflow_completed" {
			return failf("delivery body %s", short(reqs[0].body))
		}
		for _, lc := range res.LifecycleEvents {
			if !strings.HasPrefix(lc.EventType, "notification-delivery-") || lc.Data == nil {
				return failf("lifecycle event %+v: want a notification-delivery-* type and a data object", lc)
			}
		}
		return pass()
	})
}

// scenarioNotifierSignature: a signed delivery verifies under Standard
// Webhooks (webhooksig.VerifyStandard, which its own tests pin to the
// specification's test vector), and webhook-id equals the Idempotency-Key.
func scenarioNotifierSignature(ctx context.Context, s *Session) Outcome {
	return withNotifier(ctx, s, "", []int{200}, func(h *fakehost.Host, p *notifierProject) Outcome {
		if _, err := notifierNotify(ctx, h, p.event("conformance-sig", "task-state-change", nil)); err != nil {
			return failf("%v", err)
		}
		if _, err := notifierTicks(ctx, h, 10*time.Second, func() bool { return p.recv.delivered() > 0 }); err != nil {
			return failf("%v", err)
		}
		reqs := p.recv.requests()
		if len(reqs) == 0 {
			return failf("the receiver saw no request")
		}
		r := reqs[0]
		if r.header.Get("webhook-signature") == "" {
			return skipf("deliveries are not signed (signing_secret_env %s was configured)", notifierSecretEnv)
		}
		if err := webhooksig.VerifyStandard(notifierSecret, r.header, r.body, time.Now(), 0); err != nil {
			return failf("Standard Webhooks verification: %v", err)
		}
		if k := r.header.Get("Idempotency-Key"); k != "" && k != r.header.Get("webhook-id") {
			return failf("Idempotency-Key %q differs from webhook-id %q", k, r.header.Get("webhook-id"))
		}
		return pass()
	})
}

// scenarioNotifierRetry: 500, 500, then 200: delivered exactly once, after
// exactly three requests; an Idempotency-Key, when sent, is the same on
// all three.
func scenarioNotifierRetry(ctx context.Context, s *Session) Outcome {
	return withNotifier(ctx, s, "", []int{500, 500, 200}, func(h *fakehost.Host, p *notifierProject) Outcome {
		if _, err := notifierNotify(ctx, h, p.event("conformance-retry", "workflow_failed", nil)); err != nil {
			return failf("%v", err)
		}
		if _, err := notifierTicks(ctx, h, 15*time.Second, func() bool { return p.recv.delivered() > 0 }); err != nil {
			return failf("%v", err)
		}
		if _, err := notifierTicks(ctx, h, time.Second, func() bool { return false }); err != nil {
			return failf("%v", err)
		}
		reqs := p.recv.requests()
		if len(reqs) != 3 || p.recv.delivered() != 1 {
			return failf("%d requests, %d delivered; want 3 requests (500, 500, 200) and one delivery", len(reqs), p.recv.delivered())
		}
		key := reqs[0].header.Get("Idempotency-Key")
		for i, r := range reqs {
			if r.header.Get("Idempotency-Key") != key {
				return failf("request %d has Idempotency-Key %q, the first had %q", i+1, r.header.Get("Idempotency-Key"), key)
			}
		}
		return pass()
	})
}

// scenarioNotifierIdempotency: every delivery carries Idempotency-Key =
// webhook-id = the body's delivery_id, the event id and the attempt
// number, so receivers can drop at-least-once duplicates.
func scenarioNotifierIdempotency(ctx context.Context, s *Session) Outcome {
	return withNotifier(ctx, s, "", []int{200}, func(h *fakehost.Host, p *notifierProject) Outcome {
		if _, err := notifierNotify(ctx, h, p.event("conformance-idem", "workflow_completed", nil)); err != nil {
			return failf("%v", err)
		}
		if _, err := notifierTicks(ctx, h, 10*time.Second, func() bool { return p.recv.delivered() > 0 }); err != nil {
			return failf("%v", err)
		}
		reqs := p.recv.requests()
		if len(reqs) == 0 {
			return failf("the receiver saw no request")
		}
		r := reqs[0]
		var body struct {
			DeliveryID string `json:"delivery_id"`
		}
		_ = json.Unmarshal(r.body, &body)
		key := r.header.Get("Idempotency-Key")
		switch {
		case key == "":
			return failf("no Idempotency-Key header")
		case key != body.DeliveryID || key != r.header.Get("webhook-id"):
			return failf("Idempotency-Key %q, webhook-id %q and delivery_id %q differ", key, r.header.Get("webhook-id"), body.DeliveryID)
		case r.header.Get("X-Animus-Event-Id") != "conformance-idem":
			return failf("X-Animus-Event-Id = %q", r.header.Get("X-Animus-Event-Id"))
		case r.header.Get("X-Animus-Delivery-Attempt") != "1":
			return failf("X-Animus-Delivery-Attempt = %q on the first attempt", r.header.Get("X-Animus-Delivery-Attempt"))
		}
		return pass()
	})
}

// scenarioNotifierPermanent: a 400 is not retried; the delivery is
// dead-lettered and reported as such.
func scenarioNotifierPermanent(ctx context.Context, s *Session) Outcome {
	return withNotifier(ctx, s, "", []int{400}, func(h *fakehost.Host, p *notifierProject) Outcome {
		res, err := notifierNotify(ctx, h, p.event("conformance-400", "workflow_failed", nil))
		if err != nil {
			return failf("%v", err)
		}
		evs := res.LifecycleEvents
		more, err := notifierTicks(ctx, h, 3*time.Second, func() bool { return false })
		if err != nil {
			return failf("%v", err)
		}
		evs = append(evs, more...)
		if n := len(p.recv.requests()); n != 1 {
			return failf("a 400 was sent %d times; it must be dead-lettered after one", n)
		}
		if !strings.Contains(lifecycleTypes(evs), "dead-lettered") {
			return failf("no notification-delivery-dead-lettered event (saw %s)", lifecycleTypes(evs))
		}
		return pass()
	})
}

// scenarioNotifierRetryAfter: a 429 with Retry-After: 2 is retried no
// sooner than 2 s later, then delivered.
func scenarioNotifierRetryAfter(ctx context.Context, s *Session) Outcome {
	return withNotifier(ctx, s, "2", []int{429, 200}, func(h *fakehost.Host, p *notifierProject) Outcome {
		if _, err := notifierNotify(ctx, h, p.event("conformance-429", "workflow_completed", nil)); err != nil {
			return failf("%v", err)
		}
		if _, err := notifierTicks(ctx, h, 10*time.Second, func() bool { return p.recv.delivered() > 0 }); err != nil {
			return failf("%v", err)
		}
		reqs := p.recv.requests()
		if len(reqs) < 2 || p.recv.delivered() != 1 {
			return failf("%d requests, %d delivered; want a retry that is delivered", len(reqs), p.recv.delivered())
		}
		// 100 ms of slack for clock granularity between the two stamps.
		if gap := reqs[1].at.Sub(reqs[0].at); gap < 1900*time.Millisecond {
			return failf("retried %v after a 429 carrying Retry-After: 2", gap.Round(time.Millisecond))
		}
		return pass()
	})
}

// scenarioNotifierRenotify: the same event notified again after it was
// delivered is not sent again (dedup by delivery key, not only while the
// delivery is pending).
func scenarioNotifierRenotify(ctx context.Context, s *Session) Outcome {
	return withNotifier(ctx, s, "", []int{200}, func(h *fakehost.Host, p *notifierProject) Outcome {
		ev := p.event("conformance-twice", "workflow_completed", nil)
		if _, err := notifierNotify(ctx, h, ev); err != nil {
			return failf("%v", err)
		}
		if _, err := notifierTicks(ctx, h, 10*time.Second, func() bool { return p.recv.delivered() > 0 }); err != nil {
			return failf("%v", err)
		}
		if _, err := notifierNotify(ctx, h, ev); err != nil {
			return failf("%v", err)
		}
		if _, err := notifierTicks(ctx, h, time.Second, func() bool { return false }); err != nil {
			return failf("%v", err)
		}
		if n := p.recv.delivered(); n != 1 {
			return failf("an event notified twice was delivered %d times", n)
		}
		return pass()
	})
}

// scenarioNotifierLoopGuard: the daemon hands the plugin's own lifecycle
// events back as events; one about the connector must not go to it.
func scenarioNotifierLoopGuard(ctx context.Context, s *Session) Outcome {
	return withNotifier(ctx, s, "", []int{200}, func(h *fakehost.Host, p *notifierProject) Outcome {
		data := map[string]any{"connector_id": notifierConnector, "delivery_id": "d-1", "event_id": "e-1", "subscription_id": "everything"}
		res, err := notifierNotify(ctx, h, p.event("conformance-loop", "notification-delivery-sent", data))
		if err != nil {
			return failf("%v", err)
		}
		if _, err := notifierTicks(ctx, h, time.Second, func() bool { return false }); err != nil {
			return failf("%v", err)
		}
		if n := len(p.recv.requests()); n != 0 || res.Accepted {
			return failf("a notification-delivery-sent event about connector %q was accepted=%v and sent %d times",
				notifierConnector, res.Accepted, n)
		}
		return pass()
	})
}

// scenarioNotifierBadEvent: an event without project_root is -32602 (the
// reference's InvalidRequest), and the plugin keeps serving.
func scenarioNotifierBadEvent(ctx context.Context, s *Session) Outcome {
	return withNotifier(ctx, s, "", []int{200}, func(h *fakehost.Host, p *notifierProject) Outcome {
		ev := p.event("conformance-noroot", "workflow_completed", nil)
		delete(ev, "project_root")
		resp, err := call(ctx, h, notifierCallBudget, "notifier/notify", map[string]any{"event": ev})
		if err != nil {
			return failf("%v", err)
		}
		if err := wantError(resp, -32602, ""); err != nil {
			return failf("notify without project_root: %v", err)
		}
		if err := stillServes(ctx, h); err != nil {
			return failf("%v", err)
		}
		if n := len(p.recv.requests()); n != 0 {
			return failf("an invalid event was delivered %d times", n)
		}
		return pass()
	})
}
