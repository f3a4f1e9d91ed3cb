package notifierwebhook

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// TestSecretsNeverLeak: a receiver that echoes every header it got, and a
// connector whose URL (a credential, as Slack's are) points nowhere. With
// debug logging on, no secret may appear in any frame, log line,
// lifecycle event, dead letter or health report.
func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, "", 500)
	rc.echo = true
	down := newDownReceiver(t, "", 200)
	secrets := map[string]string{
		"OPS_WEBHOOK_URL": rc.url("/hooks/T1/B2/tok-SECRETPATH-4242"), "OPS_SIGNING_SECRET": opsSecret,
		"OPS_TOKEN": "bearer-SECRET-7777", "OPS_KEY": "apikey-SECRET-9999",
		"DOWN_URL": down.url("/services/T9/B9/down-SECRETPATH-5151"),
	}
	config := `{"connectors":[
		{"type":"webhook","id":"ops","url_env":"OPS_WEBHOOK_URL","signing_secret_env":"OPS_SIGNING_SECRET",
		 "bearer_token_env":"OPS_TOKEN","headers_env":{"X-Api-Key":"OPS_KEY"}},
		{"type":"slack_webhook","id":"slack","webhook_url_env":"DOWN_URL"}],
		"subscriptions":[{"id":"a","connector_id":"ops"},{"id":"b","connector_id":"slack"}],
		"retry_policy":{"max_attempts":2,"base_delay_secs":1,"max_delay_secs":1}}`
	env := map[string]string{"ANIMUS_PLUGIN_LOG_LEVEL": "debug"}
	for k, v := range secrets {
		env[k] = v
	}
	p := newProject(t, config, env)
	h := p.start(t)
	res := notify(t, h, p.event("evt-secret", "workflow_completed", `{}`))
	evs := tickUntil(t, h, res.LifecycleEvents, 300*time.Millisecond, 15*time.Second, func(evs []lifecycleEvent) bool {
		return strings.Count(typesOf(evs), "dead-lettered") == 2
	})
	if !strings.Contains(rc.requests()[0].header.Get("Authorization"), "bearer-SECRET-7777") {
		t.Fatal("the receiver did not get the token, so the echo proves nothing")
	}
	health := e2etest.Request(t, h, "health/check", nil)
	dead := e2etest.Request(t, h, "notifier/dead_letters", json.RawMessage(`{}`))
	var errText strings.Builder
	for _, e := range evs {
		if s, ok := e.Data["last_error"].(string); ok {
			errText.WriteString(s + "\n")
		}
	}
	if !strings.Contains(errText.String(), "HTTP 500") || !strings.Contains(errText.String(), "connection refused") {
		t.Fatalf("the errors lost their useful part:\n%s", errText.String())
	}
	everything := strings.Join([]string{h.WireLog(), h.Stderr(), string(health.Result), string(dead.Result), errText.String()}, "\n")
	for _, secret := range []string{"tok-SECRETPATH-4242", "bearer-SECRET-7777", "apikey-SECRET-9999", "down-SECRETPATH-5151", opsSecret} {
		if strings.Contains(everything, secret) {
			t.Errorf("secret %q leaked", secret)
		}
	}
}

// TestDeadLettersCommand: the operator's CLI mode lists and replays dead
// letters in the outbox of a running plugin (two processes, one file).
func TestDeadLettersCommand(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, opsSecret, 404)
	p := newProject(t, webhookConfig(""), map[string]string{"OPS_WEBHOOK_URL": rc.url("/hook"), "OPS_SIGNING_SECRET": opsSecret})
	h := p.start(t)
	res := notify(t, h, p.event("evt-404", "workflow_completed", `{}`))
	if typesOf(res.LifecycleEvents) != "enqueued,failed,dead-lettered" {
		t.Fatalf("%+v", res)
	}
	id, _ := res.LifecycleEvents[2].Data["delivery_id"].(string)

	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(binary(t), append([]string{"deadletters", "--project", p.root}, args...)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + p.home}
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	out, stderr, code := run()
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "HTTP 404 Not Found") || !strings.Contains(out, "1 dead letter(s)") {
		t.Fatalf("list: code %d\n%s\n%s", code, out, stderr)
	}
	out, _, code = run("--json")
	var list struct {
		Total int `json:"total"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || list.Total != 1 {
		t.Fatalf("--json: %d %s", code, out)
	}
	rc.setStatuses(200)
	out, stderr, code = run("--replay", id)
	if code != 0 || !strings.Contains(out, "replayed 1") {
		t.Fatalf("replay: %d %s %s", code, out, stderr)
	}
	if evs := flush(t, h); typesOf(evs) != "sent" {
		t.Fatalf("flush after the CLI replay: %+v", evs)
	}
	if _, stderr, code = run("--replay", id); code != 1 || !strings.Contains(stderr, "not dead letters: "+id) {
		t.Fatalf("second replay: %d %s", code, stderr)
	}
}

// TestBusyPluginStaysResponsive: while notify waits on a receiver that
// hangs, $/ping and health/check answer at once; a cancelled notify
// answers -32002 promptly yet its event stays in the outbox; shutdown
// lets an in-flight notify finish first.
func TestBusyPluginStaysResponsive(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, opsSecret, 200)
	rc.hold = make(chan struct{})
	p := newProject(t, webhookConfig(""), map[string]string{"OPS_WEBHOOK_URL": rc.url("/hook"), "OPS_SIGNING_SECRET": opsSecret})
	h := p.start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	slow := make(chan *fakehost.Response, 1)
	go func() {
		r, _ := h.Request(ctx, json.RawMessage(`"slow-1"`), "notifier/notify", map[string]any{"event": p.event("evt-held", "x", `{}`)})
		slow <- r
	}()
	<-rc.arrived
	for _, m := range []string{"$/ping", "health/check"} {
		start := time.Now()
		e2etest.Request(t, h, m, nil)
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s took %v while a notify was busy", m, d)
		}
	}
	start := time.Now()
	if err := h.Notify("$/cancelRequest", map[string]string{"id": "slow-1"}); err != nil {
		t.Fatal(err)
	}
	r := <-slow
	if r == nil || r.Error == nil || r.Error.Code != -32002 || time.Since(start) > 2*time.Second {
		t.Fatalf("cancelled notify: %+v after %v", r, time.Since(start))
	}
	// The event was committed before the send: the cancelled attempt is
	// recorded as failed and a flush delivers it.
	rc.mu.Lock()
	close(rc.hold)
	rc.hold = nil
	rc.mu.Unlock()
	tickUntil(t, h, nil, 300*time.Millisecond, 10*time.Second, func([]lifecycleEvent) bool { return len(rc.deliveredIDs()) == 1 })

	rc.mu.Lock()
	rc.hold = make(chan struct{})
	hold := rc.hold
	rc.mu.Unlock()
	rc.drainArrived()
	go func() {
		r, _ := h.Request(ctx, json.RawMessage(`"slow-2"`), "notifier/notify", map[string]any{"event": p.event("evt-drain", "x", `{}`)})
		slow <- r
	}()
	<-rc.arrived
	go func() { time.Sleep(300 * time.Millisecond); close(hold) }()
	rep, err := h.Shutdown(ctx, fakehost.LadderDaemon)
	r = <-slow
	if err != nil || !rep.ExitedByItself || rep.ExitCode != 0 {
		t.Fatalf("shutdown: %+v %v", rep, err)
	}
	var res notifyResult
	if r == nil || r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.Delivered != 1 || rep.ShutdownReply.At.Before(r.At) {
		t.Fatalf("in-flight notify during shutdown: %+v", r)
	}
}
