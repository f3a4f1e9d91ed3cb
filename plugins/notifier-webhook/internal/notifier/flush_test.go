package notifier

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
)

func TestRetryThenDeliverOnce(t *testing.T) {
	rc := newScripted(t, 500, 500, 200)
	h := newHarness(t, harnessOpts{config: webhookConfig(""), env: map[string]string{"OPS_URL": rc.URL, "OPS_SECRET": "s3cret"}})
	res := h.notify(h.event("e1", "x", `{}`))
	if res.Delivered != 0 || fmt.Sprint(types(res.LifecycleEvents)) != "[notification-delivery-enqueued notification-delivery-failed]" {
		t.Fatalf("notify %+v", res)
	}
	// Backoff with random 0.5: attempt 1 → 5 s, attempt 2 → 10 s.
	if f := h.flush(); len(f.LifecycleEvents) != 0 || len(rc.requests()) != 1 {
		t.Fatalf("flush before the row is due sent something: %+v", f)
	}
	h.clock.Advance(5 * time.Second)
	if f := h.flush(); fmt.Sprint(types(f.LifecycleEvents)) != "[notification-delivery-failed]" || f.LifecycleEvents[0].Data["attempts"] != 2 {
		t.Fatalf("second attempt %+v", f)
	}
	h.clock.Advance(9 * time.Second)
	if f := h.flush(); len(f.LifecycleEvents) != 0 {
		t.Fatalf("sent before the 10 s backoff: %+v", f)
	}
	h.clock.Advance(time.Second)
	if f := h.flush(); fmt.Sprint(types(f.LifecycleEvents)) != "[notification-delivery-sent]" || f.LifecycleEvents[0].Data["attempts"] != 3 {
		t.Fatalf("third attempt %+v", f)
	}
	h.clock.Advance(time.Hour)
	h.flush()
	id := DeliveryID(DeliveryKey("e1", "ops", "all"))
	if got := fmt.Sprint(attemptHeaders(rc.requests())); got != fmt.Sprintf("[%s#1 %s#2 %s#3]", id, id, id) {
		t.Fatalf("requests %s", got)
	}
}

func TestPermanentFailureDeadLettersAndReplays(t *testing.T) {
	rc := newScripted(t, 400)
	h := newHarness(t, harnessOpts{config: webhookConfig(""), env: map[string]string{"OPS_URL": rc.URL, "OPS_SECRET": "s3cret"}})
	if hr := h.svc.Health(context.Background()); hr.Status != pluginkit.Healthy {
		t.Fatalf("health before: %+v", hr)
	}
	res := h.notify(h.event("bad", "x", `{}`))
	if fmt.Sprint(types(res.LifecycleEvents)) != "[notification-delivery-enqueued notification-delivery-failed notification-delivery-dead-lettered]" {
		t.Fatalf("%+v", res)
	}
	dl := res.LifecycleEvents[2]
	if dl.Data["attempts"] != 1 || !strings.HasPrefix(dl.Data["last_error"].(string), "HTTP 400") || res.LifecycleEvents[1].Data["retriable"] != false {
		t.Fatalf("dead-lettered event %+v", dl)
	}
	h.clock.Advance(24 * time.Hour)
	h.flush()
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("a 400 was sent %d times", n)
	}
	hr := h.svc.Health(context.Background())
	if hr.Status != pluginkit.Degraded || !strings.Contains(hr.LastError, "1 new dead letter") || !strings.Contains(hr.LastError, "HTTP 400") {
		t.Fatalf("health %+v", hr)
	}
	list, err := h.svc.DeadLetters(context.Background(), DeadLettersParams{Limit: 10})
	if err != nil || list.Total != 1 || list.DeadLetters[0].EventID != "bad" || list.DeadLetters[0].LastStatusCode != 400 {
		t.Fatalf("dead letters %+v %v", list, err)
	}
	rc.setStatuses(200)
	rep, err := h.svc.ReplayDeadLetters(context.Background(), ReplayParams{DeliveryIDs: []string{list.DeadLetters[0].DeliveryID, "unknown"}})
	if err != nil || rep.Replayed != 1 || fmt.Sprint(rep.NotFound) != "[unknown]" {
		t.Fatalf("replay %+v %v", rep, err)
	}
	if f := h.flush(); fmt.Sprint(types(f.LifecycleEvents)) != "[notification-delivery-sent]" {
		t.Fatalf("flush after replay %+v", f)
	}
	if hr := h.svc.Health(context.Background()); hr.Status != pluginkit.Healthy {
		t.Fatalf("health after replay: %+v", hr)
	}
}

func TestMaxAttemptsDeadLetters(t *testing.T) {
	rc := newScripted(t, 502)
	h := newHarness(t, harnessOpts{config: webhookConfig(""), env: map[string]string{"OPS_URL": rc.URL, "OPS_SECRET": "s3cret"}})
	h.notify(h.event("e", "x", `{}`))
	var last FlushResult
	for range 5 {
		h.clock.Advance(time.Minute)
		if f := h.flush(); len(f.LifecycleEvents) > 0 {
			last = f
		}
	}
	if n := len(rc.requests()); n != 3 {
		t.Fatalf("%d attempts, want max_attempts = 3", n)
	}
	if fmt.Sprint(types(last.LifecycleEvents)) != "[notification-delivery-failed notification-delivery-dead-lettered]" {
		t.Fatalf("last flush %+v", last)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	rc := newScripted(t, 429, 200)
	rc.header.Set("Retry-After", "30")
	h := newHarness(t, harnessOpts{config: webhookConfig(""), env: map[string]string{"OPS_URL": rc.URL, "OPS_SECRET": "s3cret"}})
	h.notify(h.event("e", "x", `{}`))
	h.clock.Advance(29 * time.Second)
	if f := h.flush(); len(f.LifecycleEvents) != 0 {
		t.Fatalf("retried before Retry-After: %+v", f)
	}
	h.clock.Advance(time.Second)
	if f := h.flush(); fmt.Sprint(types(f.LifecycleEvents)) != "[notification-delivery-sent]" {
		t.Fatalf("%+v", f)
	}
}

func TestMisconfiguredDeadLettersAtOnce(t *testing.T) {
	h := newHarness(t, harnessOpts{config: webhookConfig(""), env: map[string]string{"OPS_SECRET": "s3cret"}})
	res := h.notify(h.event("e", "x", `{}`))
	if len(res.LifecycleEvents) != 3 || !strings.Contains(res.LifecycleEvents[2].Data["last_error"].(string), "OPS_URL is unset") {
		t.Fatalf("%+v", res)
	}
}

func TestFlushReachesEveryProjectAfterRestart(t *testing.T) {
	rc := newScripted(t, 500)
	db := filepath.Join(t.TempDir(), "shared.sqlite")
	env := map[string]string{"OPS_URL": rc.URL, "OPS_SECRET": "s3cret"}
	first := newHarness(t, harnessOpts{config: webhookConfig(""), env: env, dbPath: db})
	first.notify(first.event("from-a", "x", `{}`))
	first.svc.Close(context.Background())

	// A new process bound to another project shares the outbox file; a
	// bare flush {} still delivers project A's row.
	rc.setStatuses(200)
	second := newHarness(t, harnessOpts{env: env, dbPath: db})
	second.clock.Advance(time.Hour)
	f := second.flush()
	if fmt.Sprint(types(f.LifecycleEvents)) != "[notification-delivery-sent]" || f.LifecycleEvents[0].ProjectRoot != first.project {
		t.Fatalf("%+v", f)
	}
}

func TestBrokenConfigHoldsRowsBack(t *testing.T) {
	rc := newScripted(t, 500, 200)
	h := newHarness(t, harnessOpts{config: webhookConfig(""), env: map[string]string{"OPS_URL": rc.URL, "OPS_SECRET": "s3cret"}})
	h.notify(h.event("e", "x", `{}`))
	h.writeConfig(`{"version":99}`)
	h.clock.Advance(time.Hour)
	if f := h.flush(); len(f.LifecycleEvents) != 0 {
		t.Fatalf("flush with a broken config: %+v", f)
	}
	if hr := h.svc.Health(context.Background()); !strings.Contains(hr.LastError, "version must be 1") {
		t.Fatalf("health %+v", hr)
	}
	h.writeConfig(webhookConfig(""))
	if f := h.flush(); fmt.Sprint(types(f.LifecycleEvents)) != "[notification-delivery-sent]" {
		t.Fatalf("%+v", f)
	}
}

// TestFlushBoundsAndReleases: max_deliveries_per_tick bounds a flush, and
// rows that could not start within the budget (one slot per connector,
// a slow receiver) go back with their attempt undone.
func TestFlushBoundsAndReleases(t *testing.T) {
	rc := newScripted(t, 503)
	h := newHarness(t, harnessOpts{
		config: strings.Replace(strings.Replace(webhookConfig(`,"max_concurrency":1`), `"max_deliveries_per_tick":8`, `"max_deliveries_per_tick":3`, 1),
			`"max_attempts":3`, `"max_attempts":10`, 1),
		env: map[string]string{"OPS_URL": rc.URL, "OPS_SECRET": "s3cret"}, flushBudget: 700 * time.Millisecond})
	for i := range 6 { // three fail synchronously, then the breaker opens
		h.notify(h.event("e"+itoa(i), "x", `{}`))
	}
	rc.setStatuses(200)
	rc.setDelay(400 * time.Millisecond)
	h.clock.Advance(time.Hour)
	f := h.flush()
	sent := len(f.LifecycleEvents)
	if sent < 1 || sent > 2 {
		t.Fatalf("flush with a 700ms budget and 400ms sends, one at a time, sent %d", sent)
	}
	rc.setDelay(0)
	for range 3 {
		h.flush()
	}
	reqs := rc.requests()
	seen := map[string]int{}
	for _, r := range reqs[3:] {
		seen[r.header.Get("Idempotency-Key")]++
		// Attempts: events 0-2 failed once synchronously; 3-5 never went
		// out before; nobody's attempt was burnt by waiting for a slot.
		if a := r.header.Get("X-Animus-Delivery-Attempt"); a != "1" && a != "2" {
			t.Errorf("attempt header %s", a)
		}
	}
	if len(seen) != 6 {
		t.Fatalf("delivered %d distinct rows, want 6", len(seen))
	}
}

// TestErrorText: once the notifier has learnt a configuration's variables,
// their values in every form are replaced by pluginkit's marker, and the
// text is made one bounded line.
func TestErrorText(t *testing.T) {
	h := newHarness(t, harnessOpts{env: map[string]string{
		"URL": "https://receiver.test/hook?token=tok-123", "SECRET": "old-key new-key", config.EnvWebhookURL: "http://quick.test/q/abcdef",
		"SLACK": "https://hooks.slack.test/services/T0001/B0002/XXXXsecret42XXXX",
		"SHORT": "abc",
	}})
	cfg := &config.Config{Connectors: []config.Connector{{ID: "w", URLEnv: "URL", SigningSecretEnv: "SECRET", HeadersEnv: map[string]string{"X": "SHORT"}},
		{ID: "s", Type: config.TypeSlack, WebhookURLEnv: "SLACK"}}}
	h.svc.learnSecrets(cfg.SecretEnvNames()...)
	const R = pluginkit.RedactedMarker
	cases := []struct{ in, want string }{
		{`Post "https://receiver.test/hook?token=tok-123": refused`, `Post "` + R + `": refused`},
		{"body echoed old-key and new-key", "body echoed " + R + " and " + R},
		{"quick http://quick.test/q/abcdef failed", "quick " + R + " failed"}, // learnt at Init
		{"slack said: no_service for XXXXsecret42XXXX under /services", "slack said: no_service for " + R + " under /services"},
		{"abc is too short to count as a secret", "abc is too short to count as a secret"},
		{"line one\nline two\r\n  three", "line one line two three"},
		{"no route for /hook?token=tok-123 (hook)", "no route for " + R + " (hook)"},
		{"echo: /q/abcdef", "echo: /q/abcdef"}, // no digit: an ordinary path word, not a token
		{strings.Repeat("x", 1000), strings.Repeat("x", MaxErrorLen-3) + "..."},
	}
	for _, c := range cases {
		if got := h.svc.errorText(c.in); got != c.want {
			t.Errorf("errorText(%.40q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestEchoedSecretsNeverSurface: a receiver that echoes the hook's token
// and the signing secret back, over several lines, leaves neither in the
// lifecycle events, the dead letters or health.
func TestEchoedSecretsNeverSurface(t *testing.T) {
	const signing = "whsec_c2VjcmV0LWtleS1ieXRlcw=="
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "bad request to %s\nsigned with %s", r.URL.RequestURI(), signing)
	}))
	t.Cleanup(rc.Close)
	hook := rc.URL + "/hook/tok-1234567890"
	h := newHarness(t, harnessOpts{config: webhookConfig(""), env: map[string]string{"OPS_URL": hook, "OPS_SECRET": signing}})
	res := h.notify(h.event("evt-1", "workflow_completed", `{}`))
	dead, err := h.svc.DeadLetters(context.Background(), DeadLettersParams{Limit: 10})
	if err != nil || len(dead.DeadLetters) != 1 {
		t.Fatalf("dead letters %+v %v", dead, err)
	}
	texts := []string{dead.DeadLetters[0].LastError, h.svc.Health(context.Background()).LastError}
	for _, ev := range res.LifecycleEvents {
		if s, ok := ev.Data["last_error"].(string); ok {
			texts = append(texts, s)
		}
	}
	if len(texts) != 4 { // dead letter, health, failed, dead-lettered
		t.Fatalf("texts %q from %+v", texts, res)
	}
	for _, text := range texts {
		if !strings.Contains(text, "bad request to "+pluginkit.RedactedMarker+" signed with "+pluginkit.RedactedMarker) {
			t.Errorf("text %q is not the redacted echo", text)
		}
		for _, secret := range []string{"tok-1234567890", signing, "\n"} {
			if strings.Contains(text, secret) {
				t.Errorf("text %q holds %q", text, secret)
			}
		}
	}
}
