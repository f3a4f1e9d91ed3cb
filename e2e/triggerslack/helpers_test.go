package triggerslack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

const binary = "animus-trigger-slack"

// Trigger ids the tests configure; the DM one differs to prove per-kind
// stamping.
const (
	triggerID   = "slack-incoming"
	triggerIDDM = "slack-dm"
)

// socketEnv is the daemon-side environment for Socket Mode against fake.
func socketEnv(fake *fakeslack.Server, extra map[string]string) map[string]string {
	env := fake.Env()
	env["SLACK_TRIGGER_ID"] = triggerID
	env["SLACK_TRIGGER_ID_DM"] = triggerIDDM
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// spawn starts the plugin as the daemon's trigger supervisor does (narrow
// allowlist plus env_required, cwd = project dir, "" for a fresh one) and
// completes the handshake within ctx.
func spawn(t *testing.T, ctx context.Context, dir string, env map[string]string) *fakehost.Host {
	t.Helper()
	return e2etest.SpawnContext(t, ctx, binary, e2etest.Options{Dir: dir, EnvMode: fakehost.EnvDaemonNarrow, Env: env})
}

func watch(t *testing.T, ctx context.Context, h *fakehost.Host) {
	t.Helper()
	resp := e2etest.RequestContext(t, ctx, h, "trigger/watch", json.RawMessage(`{}`))
	if resp.Error != nil || string(resp.Result) != `{"watching":true}` {
		t.Fatalf("trigger/watch: %s", resp.Raw)
	}
}

// event is a decoded trigger/event: the flat TriggerEvent.
type event struct {
	raw     map[string]json.RawMessage
	EventID string
	Trigger string
	Hint    string
	Payload map[string]any
}

func decodeEvent(t *testing.T, params json.RawMessage) event {
	t.Helper()
	var e event
	if err := json.Unmarshal(params, &e.raw); err != nil {
		t.Fatalf("trigger/event params: %v: %s", err, params)
	}
	var p struct {
		EventID    string         `json:"event_id"`
		TriggerID  string         `json:"trigger_id"`
		ActionHint string         `json:"action_hint"`
		Payload    map[string]any `json:"payload"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatalf("trigger/event params: %v", err)
	}
	e.EventID, e.Trigger, e.Hint, e.Payload = p.EventID, p.TriggerID, p.ActionHint, p.Payload
	return e
}

// events returns every trigger/event so far, decoded and checked for the
// promises every event keeps: flat shape, no null anywhere, no reserved
// key, payload.kind set.
func events(t *testing.T, h *fakehost.Host) []event {
	t.Helper()
	var out []event
	for _, n := range h.Notifications() {
		if n.Method != "trigger/event" {
			continue
		}
		var v any
		_ = json.Unmarshal(n.Params, &v)
		if hasNull(v) || strings.Contains(string(n.Params), `"__animus_`) {
			t.Errorf("trigger/event with a null or a reserved key: %s", n.Params)
		}
		e := decodeEvent(t, n.Params)
		if _, nested := e.raw["event"]; nested {
			t.Errorf("nested legacy shape: %s", n.Params)
		}
		if e.Payload["kind"] == nil {
			t.Errorf("payload without kind: %s", n.Params)
		}
		out = append(out, e)
	}
	return out
}

// waitEvents waits until n trigger/events have arrived and returns them.
func waitEvents(t *testing.T, ctx context.Context, h *fakehost.Host, n int) []event {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	count := 0
	_, err := h.WaitNotification(wctx, func(nt fakehost.Notification) bool {
		if nt.Method == "trigger/event" {
			count++
		}
		return count >= n
	})
	if err != nil {
		t.Fatalf("waiting for %d trigger/event: %v (got %d)", n, err, len(events(t, h)))
	}
	return events(t, h)
}

// settle waits until every envelope in ids is acked and then a little
// longer, so that an event that should not be emitted would have been.
func settle(t *testing.T, ctx context.Context, fake *fakeslack.Server, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := fake.WaitAck(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
}

// send delivers one envelope built from an inner event and returns its
// envelope id.
func send(t *testing.T, fake *fakeslack.Server, slackEventID string, retry int, inner map[string]any) string {
	t.Helper()
	env := "env-" + fake.NextID()
	if slackEventID == "" {
		slackEventID = "Ev" + fake.NextID()
	}
	if err := fake.Send(fakeslack.EventsAPI(env, retry, fakeslack.Callback(fake.Options().TeamID, slackEventID, inner))); err != nil {
		t.Fatal(err)
	}
	return env
}

func health(t *testing.T, ctx context.Context, h *fakehost.Host) (status, lastError string) {
	t.Helper()
	resp := e2etest.RequestContext(t, ctx, h, "health/check", nil)
	var r struct {
		Status    string `json:"status"`
		LastError string `json:"last_error"`
	}
	if resp.Error != nil || json.Unmarshal(resp.Result, &r) != nil {
		t.Fatalf("health/check: %s", resp.Raw)
	}
	return r.Status, r.LastError
}

// waitHealth polls health/check until it reports want.
func waitHealth(t *testing.T, ctx context.Context, h *fakehost.Host, want string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	var st, last string
	for time.Now().Before(deadline) {
		if st, last = health(t, ctx, h); st == want {
			return last
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("health stayed %s (%s), want %s", st, last, want)
	return ""
}

func errorf(resp *fakehost.Response) string {
	if resp.Error == nil {
		return fmt.Sprintf("result %s", resp.Result)
	}
	return fmt.Sprintf("%d %s %s", resp.Error.Code, resp.Error.Message, resp.Error.Data)
}

// hasNull reports a JSON null anywhere in v.
func hasNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}

// String keeps failure messages readable.
func (e event) String() string {
	return fmt.Sprintf("{%s %s %v %q}", e.EventID, e.Trigger, e.Payload["kind"], e.Payload["text"])
}
