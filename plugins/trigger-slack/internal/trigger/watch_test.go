package trigger

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/store"
)

// fakeSlack is e2e/fakeslack, the project's fake Slack, as these tests
// use it: a workspace matching the mention and dm builders (team T1, bot
// UBOT) and waits that fail the test.
type fakeSlack struct {
	*fakeslack.Server
	t *testing.T
}

func newFakeSlack(t *testing.T) *fakeSlack {
	return &fakeSlack{t: t, Server: fakeslack.New(t, fakeslack.Options{
		AppToken: "xapp-test", BotToken: "xoxb-test", TeamID: "T1", BotUserID: "UBOT", BotID: "BBOT",
	})}
}

// waitConnected waits for the plugin's Socket Mode connection.
func (f *fakeSlack) waitConnected() {
	f.t.Helper()
	if err := f.WaitConnections(context.Background(), 1); err != nil {
		f.t.Fatalf("the plugin did not open a Socket Mode connection: %v", err)
	}
}

// push sends an events_api envelope and waits for the plugin's ack, which
// must be the next one: a retry of an envelope is acked again.
func (f *fakeSlack) push(envelopeID string, retry int, callback []byte) {
	f.t.Helper()
	n := len(f.Acks())
	if err := f.Send(fakeslack.EventsAPI(envelopeID, retry, callback)); err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	acks, err := f.WaitAcks(ctx, n+1)
	if err != nil {
		f.t.Fatalf("envelope %s was not acked: %v", envelopeID, err)
	}
	if acks[n] != envelopeID {
		f.t.Fatalf("ack for %q, want %q", acks[n], envelopeID)
	}
}

// socketEnv is a complete Socket Mode configuration against fake; extra
// overrides it, "" removing a variable.
func socketEnv(fake *fakeSlack, extra map[string]string) map[string]string {
	env := fake.Env()
	env["SLACK_TRIGGER_ID"], env["SLACK_TRIGGER_ID_DM"] = "slack-incoming", "slack-dm"
	for k, v := range extra {
		if v == "" {
			delete(env, k)
			continue
		}
		env[k] = v
	}
	return env
}

// mention is the event_callback of an app_mention by user in channel at ts.
func mention(slackEventID, channel, ts, user string) []byte {
	return fakeslack.Callback("T1", slackEventID, fakeslack.Mention(channel, user, "<@UBOT> please", ts))
}

// dm is the event_callback of a direct message from user.
func dm(slackEventID, channel, ts, user string) []byte {
	return fakeslack.Callback("T1", slackEventID, fakeslack.DirectMessage(channel, user, "fix it", ts))
}

// emitted is what the tests check of a trigger/event.
type emitted struct {
	EventID   string `json:"event_id"`
	TriggerID string `json:"trigger_id"`
	Hint      string `json:"action_hint"`
	Payload   struct {
		Kind string `json:"kind"`
		User string `json:"user"`
	} `json:"payload"`
}

func (h *host) nextEvent() emitted {
	h.t.Helper()
	f := h.next("trigger/event")
	if f.Method != "trigger/event" {
		h.t.Fatalf("notification %s, want trigger/event", f.Method)
	}
	var ev emitted
	if err := json.Unmarshal(f.Params, &ev); err != nil {
		h.t.Fatal(err)
	}
	for _, absent := range []string{`"subject_id"`, `"subject_kind"`, `null`} {
		if strings.Contains(string(f.Params), absent) {
			h.t.Fatalf("event carries %s: %s", absent, f.Params)
		}
	}
	return ev
}

func (h *host) waitHealth(want string) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		res, e := h.call("health/check", nil)
		if e != nil {
			h.t.Fatalf("health/check: %+v", e)
		}
		var r struct {
			Status    string `json:"status"`
			LastError string `json:"last_error"`
		}
		_ = json.Unmarshal(res, &r)
		if r.Status == want {
			return
		}
		last = string(res)
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatalf("health never became %s; last %s", want, last)
}

// TestSocketModeStream: trigger/watch over Socket Mode emits flat events
// in delivery order, stamped with the right trigger id, deduplicated, and
// without the bot's own messages.
func TestSocketModeStream(t *testing.T) {
	type push struct {
		envelope string
		retry    int
		callback []byte
	}
	fromBot := fakeslack.Mention("C1", "U9", "<@UBOT> please", "5.5")
	fromBot["bot_id"] = "B9"
	withBotID := fakeslack.Callback("T1", "Ev5", fromBot)
	cases := []struct {
		name   string
		env    map[string]string  // over socketEnv; "" removes
		auth   *fakeslack.Failure // auth.test's answer for the whole test (nil: the bot's identity)
		params any                // trigger/watch params
		pushes []push
		want   []emitted
		log    string // a log line the case must produce
	}{
		{name: "per-kind trigger ids, dedup, own messages dropped",
			pushes: []push{
				{"e1", 0, mention("Ev1", "C1", "1.1", "U1")},
				{"e1", 1, mention("Ev1", "C1", "1.1", "U1")}, // Slack's retry
				{"e2", 0, mention("Ev2", "C1", "2.2", "UBOT")},
				{"e3", 0, dm("Ev3", "D1", "3.3", "U1")},
			},
			want: []emitted{
				{EventID: "slack:T1/C1/1.1", TriggerID: "slack-incoming", Hint: "create_task"},
				{EventID: "slack:T1/D1/3.3", TriggerID: "slack-dm", Hint: "create_task"},
			},
			log: "duplicate slack event suppressed"},
		{name: "trigger id from the watch config", env: map[string]string{"SLACK_TRIGGER_ID": "", "SLACK_TRIGGER_ID_DM": ""},
			params: map[string]any{"config": map[string]any{"trigger_id": " wf-7 "}},
			pushes: []push{{"e1", 0, mention("Ev1", "C1", "1.1", "U1")}, {"e2", 0, dm("Ev2", "D1", "2.2", "U1")}},
			want: []emitted{
				{EventID: "slack:T1/C1/1.1", TriggerID: "wf-7", Hint: "create_task"},
				{EventID: "slack:T1/D1/2.2", TriggerID: "wf-7", Hint: "create_task"},
			},
			log: `"trigger_id_mention":"wf-7"`},
		{name: "channel allowlist", env: map[string]string{"SLACK_FILTER_CHANNELS": "C2, D1"},
			pushes: []push{{"e1", 0, mention("Ev1", "C1", "1.1", "U1")}, {"e2", 0, mention("Ev2", "C2", "2.2", "U1")}},
			want:   []emitted{{EventID: "slack:T1/C2/2.2", TriggerID: "slack-incoming", Hint: "create_task"}},
			log:    "slack event ignored"},
		{name: "auth.test unavailable: watch still starts, own user id unknown",
			auth: &fakeslack.Failure{Status: 503},
			pushes: []push{
				{"e5", 0, withBotID},                           // any bot: dropped without the identity
				{"e6", 0, mention("Ev6", "C1", "6.6", "UBOT")}, // the bot's own user id is not known yet
			},
			want: []emitted{{EventID: "slack:T1/C1/6.6", TriggerID: "slack-incoming", Hint: "create_task"}},
			log:  "the bot's own user id is unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeSlack(t)
			if tc.auth != nil {
				fake.SetFailure("auth.test", *tc.auth)
			}
			root := t.TempDir()
			h := startHost(t, socketEnv(fake, tc.env), root)
			params := tc.params
			if params == nil {
				params = map[string]any{}
			}
			res, e := h.call("trigger/watch", params)
			if e != nil || string(res) != `{"watching":true}` {
				t.Fatalf("trigger/watch = %s, %+v", res, e)
			}
			fake.waitConnected()
			h.waitHealth("healthy")
			for _, p := range tc.pushes {
				fake.push(p.envelope, p.retry, p.callback)
			}
			for i, want := range tc.want {
				got := h.nextEvent()
				want.Payload = got.Payload
				if got != want {
					t.Fatalf("event %d = %+v, want %+v", i, got, want)
				}
				if got.Payload.Kind != "slack.mention" && got.Payload.Kind != "slack.dm" {
					t.Fatalf("event %d payload.kind = %q", i, got.Payload.Kind)
				}
			}
			h.waitLog(tc.log)
			h.stop()
			stats := h.svc.Stats()
			if got := stats.Emitted.Load(); got != int64(len(tc.want)) {
				t.Fatalf("emitted %d events after all deliveries, want %d", got, len(tc.want))
			}
			if got := stats.Emitted.Load() + stats.Duplicates.Load() + stats.Dropped.Load(); got != int64(len(tc.pushes)) {
				t.Fatalf("%d deliveries accounted for, want %d", got, len(tc.pushes))
			}
			if _, err := os.Stat(filepath.Join(root, ".animus", "trigger-slack", "dedup.db")); err != nil {
				t.Fatalf("seen-set not under the project root: %v", err)
			}
		})
	}
}

// TestWatchIsIdempotentAndAcksAreRecorded: a second watch acknowledges the
// running stream; trigger/ack notifications are recorded and never
// answered; the statuses survive the plugin in the seen-set file.
func TestWatchIsIdempotentAndAcksAreRecorded(t *testing.T) {
	fake := newFakeSlack(t)
	state := t.TempDir()
	h := startHost(t, socketEnv(fake, map[string]string{"SLACK_STATE_DIR": state}), t.TempDir())
	for i := 0; i < 2; i++ {
		if res, e := h.call("trigger/watch", map[string]any{}); e != nil || string(res) != `{"watching":true}` {
			t.Fatalf("watch %d = %s, %+v", i, res, e)
		}
	}
	fake.waitConnected()
	fake.push("e1", 0, mention("Ev1", "C1", "1.1", "U1"))
	fake.push("e2", 0, dm("Ev2", "D1", "2.2", "U1"))
	first, second := h.nextEvent(), h.nextEvent()

	acks := []struct {
		eventID, status string
		log             []string
	}{
		{first.EventID, "queued", []string{"ack recorded", first.EventID, `"status":"queued"`}},
		{second.EventID, "unmatched", []string{"matched no enabled workflow trigger", "slack-incoming", "slack-dm"}},
		{"slack:T1/C9/9.9", "queued", []string{"did not emit", "slack:T1/C9/9.9"}},
	}
	for _, a := range acks {
		h.notify("trigger/ack", map[string]string{"event_id": a.eventID, "status": a.status})
		h.waitLog(a.log...)
	}
	// The request form is answered (spec §7.3).
	res, e := h.call("trigger/ack", map[string]string{"event_id": second.EventID})
	if e != nil || string(res) != `{"event_id":"`+second.EventID+`","acked":true}` {
		t.Fatalf("trigger/ack request = %s, %+v", res, e)
	}
	if n := h.svc.status.Get().Connections; n != 1 {
		t.Fatalf("%d Socket Mode connections; a second watch must not open another", n)
	}
	h.stop()

	st, err := store.Open(context.Background(), filepath.Join(state, "dedup.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for id, want := range map[string]string{first.EventID: "queued", second.EventID: "acked"} {
		if got, err := st.AckStatus(context.Background(), id); err != nil || got != want {
			t.Fatalf("stored status of %s = %q, %v; want %q", id, got, err, want)
		}
	}
	if got := h.svc.Stats().Acks.Load(); got != 4 {
		t.Fatalf("%d acks counted, want 4", got)
	}
}

// TestWatchFailures: a watch that cannot work fails before acknowledging,
// with a message the host can classify, and leaves no stream behind.
func TestWatchFailures(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	httpEnv := map[string]string{"SLACK_MODE": "http", "SLACK_APP_TOKEN": "", "SLACK_SIGNING_SECRET": "s3cret"}
	with := func(base map[string]string, k, v string) map[string]string {
		m := map[string]string{k: v}
		for bk, bv := range base {
			m[bk] = bv
		}
		return m
	}
	cases := []struct {
		name     string
		env      map[string]string
		auth     *fakeslack.Failure // auth.test's answer (nil: the bot's identity)
		params   any
		code     int
		category string
		msg      string
	}{
		{name: "bot token rejected", env: map[string]string{"SLACK_BOT_TOKEN": "xoxb-wrong"},
			code: -32603, category: "unavailable", msg: "backend unavailable: SLACK_BOT_TOKEN auth failed: invalid_auth"},
		{name: "bot token revoked", auth: &fakeslack.Failure{Error: "token_revoked"},
			code: -32603, category: "unavailable", msg: "auth failed: token_revoked"},
		{name: "seen-set cannot be opened", env: map[string]string{"SLACK_STATE_DIR": notADir},
			code: -32603, category: "unavailable", msg: "backend unavailable: dedup store cannot be opened"},
		{name: "config not an object", params: map[string]any{"config": "slack"},
			code: -32602, category: "invalid_request", msg: `field "config": expected object`},
		{name: "config trigger_id not a string", params: map[string]any{"config": map[string]any{"trigger_id": 7}},
			code: -32602, category: "invalid_request", msg: `field "config.trigger_id": expected string`},
		{name: "events port in use", env: with(httpEnv, "SLACK_EVENTS_ADDR", busy.Addr().String()),
			code: -32603, category: "address_in_use", msg: "address in use"},
		{name: "events address unusable", env: with(httpEnv, "SLACK_EVENTS_ADDR", "127.0.0.1:99999"),
			code: -32603, category: "unavailable", msg: "backend unavailable: cannot listen on 127.0.0.1:99999"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeSlack(t)
			if tc.auth != nil {
				fake.SetFailure("auth.test", *tc.auth)
			}
			h := startHost(t, socketEnv(fake, tc.env), t.TempDir())
			params := tc.params
			if params == nil {
				params = map[string]any{}
			}
			res, e := h.call("trigger/watch", params)
			if e == nil {
				t.Fatalf("trigger/watch = %s, want error %q", res, tc.msg)
			}
			if e.Code != tc.code || e.Data["category"] != tc.category || !strings.HasPrefix(e.Message, tc.msg) && !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("trigger/watch error = %d %v %q, want %d %s %q", e.Code, e.Data["category"], e.Message, tc.code, tc.category, tc.msg)
			}
			if h.svc.watching.Load() || h.svc.store.Load() != nil {
				t.Fatal("a failed watch left the stream or the seen-set open")
			}
			if fake.Opens() != 0 || fake.Connections() != 0 {
				t.Fatalf("a failed watch connected to Slack (%d opens, %d connections)", fake.Opens(), fake.Connections())
			}
		})
	}
}

// TestIdentityLearnedLater: when auth.test fails at watch time it is
// retried in the background, and once it succeeds the bot's own messages
// stop being events.
func TestIdentityLearnedLater(t *testing.T) {
	fake := newFakeSlack(t)
	fake.SetFailure("auth.test", fakeslack.Failure{Status: 500})
	h := startHost(t, socketEnv(fake, nil), t.TempDir())
	h.svc.identityRetry = 20 * time.Millisecond
	if _, e := h.call("trigger/watch", map[string]any{}); e != nil {
		t.Fatalf("trigger/watch: %+v", e)
	}
	fake.waitConnected()
	h.waitLog("auth.test failed again")
	fake.SetFailure("auth.test", fakeslack.Failure{}) // Slack is back
	h.waitLog("bot identity", `"user_id":"UBOT"`)

	fake.push("e1", 0, mention("Ev1", "C1", "1.1", "UBOT")) // the bot itself: dropped now
	fake.push("e2", 0, mention("Ev2", "C1", "2.2", "U1"))
	if got := h.nextEvent(); got.EventID != "slack:T1/C1/2.2" {
		t.Fatalf("event %s, want the user's (the bot's own message must be dropped)", got.EventID)
	}
	if n := len(fake.Calls("auth.test")); n < 3 {
		t.Fatalf("auth.test called %d times, want the watch's try and at least two retries", n)
	}
}
