package notifierwebhook

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestCrashLosesNothing is the crash proof: with the receiver
// down, 1,000 events are notified (each acknowledged only after its
// commit), the plugin is SIGKILLed, a new process starts, the receiver
// comes up, and flush {} ticks run until the outbox is empty. Every event
// must arrive; a duplicate may only ever repeat a delivery_id.
func TestCrashLosesNothing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crash test with 1,000 events skipped in -short mode")
	}
	const events = 1000
	rc := newDownReceiver(t, opsSecret, 200)
	p := newProject(t, webhookConfig(""), map[string]string{"OPS_WEBHOOK_URL": rc.url("/hook"), "OPS_SIGNING_SECRET": opsSecret})
	p.writeConfig(t, `{"connectors":[{"type":"webhook","id":"ops","url_env":"OPS_WEBHOOK_URL","signing_secret_env":"OPS_SIGNING_SECRET"}],
		"subscriptions":[{"id":"all-to-ops","connector_id":"ops"}],
		"retry_policy":{"max_attempts":10,"base_delay_secs":1,"max_delay_secs":2},"max_deliveries_per_tick":128}`)

	first := p.start(t)
	start := time.Now()
	for i := range events {
		res := notify(t, first, p.event(fmt.Sprintf("evt-%04d", i), "task-state-change", fmt.Sprintf(`{"task_id":"T-%d"}`, i)))
		if !res.Accepted || res.Delivered != 0 {
			t.Fatalf("event %d with the receiver down: %+v", i, res)
		}
	}
	t.Logf("%d notifies with the receiver down in %v", events, time.Since(start).Round(time.Millisecond))
	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	if exited, code := first.Exited(); !exited || code != -1 {
		t.Fatalf("plugin not killed by a signal: exited %v code %d", exited, code)
	}

	second := p.start(t)
	rc.up()
	start = time.Now()
	ticks := 0
	tickUntil(t, second, nil, 100*time.Millisecond, 60*time.Second, func([]lifecycleEvent) bool {
		ticks++
		return len(rc.deliveredIDs()) >= events
	})
	t.Logf("restart delivered %d events in %v over %d flush ticks", events, time.Since(start).Round(time.Millisecond), ticks)

	// Nothing is left: more ticks send nothing new.
	before := len(rc.requests())
	for range 3 {
		if evs := flush(t, second); len(evs) != 0 {
			t.Fatalf("flush after the outbox drained: %s", typesOf(evs))
		}
	}
	reqs := rc.requests()
	if len(reqs) != before {
		t.Fatalf("%d more requests after the outbox drained", len(reqs)-before)
	}
	// Every event exactly once by delivery_id; a repeated request must
	// carry an id already seen for the same event.
	byID := map[string]string{}
	for _, r := range reqs {
		if r.verifyErr != nil {
			t.Fatalf("signature: %v", r.verifyErr)
		}
		var body struct {
			DeliveryID string `json:"delivery_id"`
			Event      struct {
				ID string `json:"id"`
			} `json:"event"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		if body.DeliveryID != r.header.Get("Idempotency-Key") {
			t.Fatalf("Idempotency-Key %s differs from delivery_id %s", r.header.Get("Idempotency-Key"), body.DeliveryID)
		}
		if prev, ok := byID[body.DeliveryID]; ok && prev != body.Event.ID {
			t.Fatalf("delivery_id %s carried events %s and %s", body.DeliveryID, prev, body.Event.ID)
		}
		byID[body.DeliveryID] = body.Event.ID
	}
	seen := map[string]bool{}
	for _, ev := range byID {
		seen[ev] = true
	}
	for i := range events {
		if !seen[fmt.Sprintf("evt-%04d", i)] {
			t.Fatalf("evt-%04d was never delivered", i)
		}
	}
	if len(byID) != events {
		t.Fatalf("%d distinct delivery ids for %d events", len(byID), events)
	}
	t.Logf("%d requests for %d events (%d duplicates, all of a known delivery_id)", len(reqs), events, len(reqs)-events)
}

// TestCrashMidSendResendsSameID: SIGKILL while the receiver holds the
// request open (sent, outcome not yet recorded). The restarted plugin
// sends it again with the same delivery_id and Idempotency-Key.
func TestCrashMidSendResendsSameID(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, opsSecret, 200)
	rc.hold = make(chan struct{})
	p := newProject(t, webhookConfig(""), map[string]string{"OPS_WEBHOOK_URL": rc.url("/hook"), "OPS_SIGNING_SECRET": opsSecret})
	first := p.start(t)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		first.Call(ctx, "notifier/notify", map[string]any{"event": p.event("evt-mid", "workflow_completed", `{}`)})
	}()
	select {
	case <-rc.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the receiver")
	}
	if err := first.Kill(); err != nil {
		t.Fatal(err)
	}
	// Later requests are answered at once; the held one only ends when the
	// server sees its client gone, so it never counts as delivered.
	rc.mu.Lock()
	rc.hold = nil
	rc.mu.Unlock()

	second := p.start(t)
	evs := tickUntil(t, second, nil, 100*time.Millisecond, 10*time.Second, func([]lifecycleEvent) bool { return len(rc.deliveredIDs()) == 1 })
	reqs := rc.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests:\n%s", len(reqs), describe(reqs))
	}
	a, b := reqs[0].header, reqs[1].header
	if a.Get("Idempotency-Key") != b.Get("Idempotency-Key") || a.Get("webhook-id") != b.Get("webhook-id") || b.Get("X-Animus-Delivery-Attempt") != "2" {
		t.Fatalf("resend differs:\n%s", describe(reqs))
	}
	if typesOf(evs) != "sent" || evs[0].Data["attempts"] != float64(2) {
		t.Fatalf("lifecycle after restart: %+v", evs)
	}
}
