package triggerslack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// TestSocketModeEvents: a mention and a DM become flat events with their
// trigger ids, in order; everything else Slack sends is acked and dropped.
func TestSocketModeEvents(t *testing.T) {
	t.Parallel()
	ctx := e2etest.Ctx(t, time.Minute)
	fake := fakeslack.New(t, fakeslack.Options{})
	h := spawn(t, ctx, "", socketEnv(fake, nil))
	if st, _ := health(t, ctx, h); st != "healthy" {
		t.Fatalf("configured plugin before watch: %s", st)
	}
	watch(t, ctx, h)
	if err := fake.WaitConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, ctx, h, "healthy")

	mentionTS, dmTS := fake.NextTS(), fake.NextTS()
	mention := fakeslack.Mention("C1", "U1", "<@U0BOT> please review #42", mentionTS)
	mention["thread_ts"] = "1715700000.000001"
	envs := []string{
		send(t, fake, "", 0, mention),
		send(t, fake, "", 0, fakeslack.DirectMessage("D1", "U1", "can you fix the build?", dmTS)),
		// Ignored: channel chatter, an edited DM, a reaction.
		send(t, fake, "", 0, map[string]any{"type": "message", "channel_type": "channel", "channel": "C1", "user": "U1", "text": "hi all", "ts": fake.NextTS()}),
		send(t, fake, "", 0, map[string]any{"type": "message", "channel_type": "im", "subtype": "message_changed", "channel": "D1", "ts": fake.NextTS()}),
		send(t, fake, "", 0, map[string]any{"type": "reaction_added", "user": "U1", "reaction": "eyes", "event_ts": fake.NextTS()}),
	}
	for _, id := range envs {
		lat, err := fake.WaitAck(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if lat > 3*time.Second {
			t.Errorf("envelope %s acked after %v; Slack redelivers after 3 s", id, lat)
		}
	}
	waitEvents(t, ctx, h, 2)
	settle(t, ctx, fake)
	got := events(t, h)
	if len(got) != 2 {
		t.Fatalf("%d events, want 2 (mention, dm): %+v", len(got), got)
	}
	m, d := got[0], got[1]
	if m.EventID != "slack:T0FAKE/C1/"+mentionTS || m.Trigger != triggerID || m.Hint != "create_task" {
		t.Errorf("mention event = %s %s %s", m.EventID, m.Trigger, m.Hint)
	}
	wantPayload := map[string]any{}
	for k, v := range mention {
		wantPayload[k] = v
	}
	wantPayload["kind"] = "slack.mention"
	if !reflect.DeepEqual(m.Payload, wantPayload) {
		t.Errorf("mention payload = %v\nwant %v (the raw inner event plus kind)", m.Payload, wantPayload)
	}
	if d.EventID != "slack:T0FAKE/D1/"+dmTS || d.Trigger != triggerIDDM || d.Payload["kind"] != "slack.dm" || d.Payload["text"] != "can you fix the build?" {
		t.Errorf("dm event = %+v", d)
	}
	for _, k := range []string{"subject_id", "subject_kind"} {
		if _, ok := m.raw[k]; ok {
			t.Errorf("%s present: %v", k, m.raw)
		}
	}

	// The daemon acks with notifications (never answered; a reply would be
	// a fakehost violation); the spec's request form gets its reply.
	for _, st := range []string{"queued", "unmatched", "shutdown", "some_future_status"} {
		if err := h.Notify("trigger/ack", map[string]string{"event_id": m.EventID, "status": st}); err != nil {
			t.Fatal(err)
		}
	}
	resp := e2etest.RequestContext(t, ctx, h, "trigger/ack", map[string]string{"event_id": d.EventID, "status": "queued"})
	want := `{"event_id":"` + d.EventID + `","acked":true}`
	if resp.Error != nil || string(resp.Result) != want {
		t.Fatalf("trigger/ack request: %s, want %s", resp.Raw, want)
	}
	// A second watch acknowledges the running stream; no second socket.
	watch(t, ctx, h)
	time.Sleep(200 * time.Millisecond)
	if n := fake.Connections(); n != 1 {
		t.Fatalf("%d connections after a second watch, want 1", n)
	}
}

// TestSocketModeDedup: a duplicate envelope and Slack's retry_attempt
// redelivery are emitted once, also by the next process on the same
// project (the seen-set is persisted), while a new message still goes out.
func TestSocketModeDedup(t *testing.T) {
	t.Parallel()
	ctx := e2etest.Ctx(t, time.Minute)
	fake := fakeslack.New(t, fakeslack.Options{})
	project := t.TempDir()
	env := socketEnv(fake, nil)
	h := spawn(t, ctx, project, env)
	watch(t, ctx, h)
	if err := fake.WaitConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// A mention of the bot inside its DM reaches it twice, as app_mention
	// and as message.im, with two Slack event ids: one event.
	ts := fake.NextTS()
	msg := fakeslack.Mention("D1", "U1", "<@U0BOT> deploy", ts)
	e1 := send(t, fake, "EvDUP1", 0, msg)
	e2 := send(t, fake, "EvDUP1", 0, msg) // the same delivery again
	e3 := send(t, fake, "EvDUP1", 1, msg) // Slack's retry
	e4 := send(t, fake, "EvDUP2", 0, fakeslack.DirectMessage("D1", "U1", "<@U0BOT> deploy", ts))
	settle(t, ctx, fake, e1, e2, e3, e4)
	if got := events(t, h); len(got) != 1 || got[0].EventID != "slack:T0FAKE/D1/"+ts || got[0].Payload["kind"] != "slack.mention" {
		t.Fatalf("events = %+v, want exactly one", got)
	}
	if _, err := os.Stat(filepath.Join(project, ".animus", "trigger-slack", "dedup.db")); err != nil {
		t.Fatalf("seen-set not under the project's .animus: %v", err)
	}
	rep, err := h.Shutdown(ctx, fakehost.LadderDaemon)
	if err != nil || !rep.ExitedByItself || rep.ExitCode != 0 {
		t.Fatalf("shutdown: %+v %v", rep, err)
	}

	// A restarted plugin (same project) sees a replay of the same event.
	h2 := spawn(t, ctx, project, env)
	watch(t, ctx, h2)
	if err := fake.WaitConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	replay := send(t, fake, "EvDUP1", 2, msg)
	fresh := send(t, fake, "", 0, fakeslack.Mention("C1", "U1", "<@U0BOT> and this", fake.NextTS()))
	settle(t, ctx, fake, replay, fresh)
	got := events(t, h2)
	if len(got) != 1 || got[0].Payload["text"] != "<@U0BOT> and this" {
		t.Fatalf("after restart events = %+v, want only the new message", got)
	}
}

// TestSocketModeReconnect: after Slack's disconnect, and after a dropped
// connection, the plugin reconnects and gets the next event.
func TestSocketModeReconnect(t *testing.T) {
	t.Parallel()
	ctx := e2etest.Ctx(t, time.Minute)
	fake := fakeslack.New(t, fakeslack.Options{})
	h := spawn(t, ctx, "", socketEnv(fake, nil))
	watch(t, ctx, h)
	if err := fake.WaitConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := fake.Disconnect("refresh_requested"); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitConnections(ctx, 2); err != nil {
		t.Fatalf("no reconnect after disconnect: %v", err)
	}
	send(t, fake, "", 0, fakeslack.Mention("C1", "U1", "<@U0BOT> after refresh", fake.NextTS()))
	waitEvents(t, ctx, h, 1)

	fake.DropConnections()
	if err := fake.WaitConnections(ctx, 3); err != nil {
		t.Fatalf("no reconnect after a dropped connection: %v", err)
	}
	send(t, fake, "", 0, fakeslack.DirectMessage("D1", "U1", "after drop", fake.NextTS()))
	got := waitEvents(t, ctx, h, 2)
	if got[1].Payload["text"] != "after drop" {
		t.Fatalf("events = %+v", got)
	}
	if n := fake.Opens(); n != 3 {
		t.Errorf("apps.connections.open called %d times, want 3 (one fresh URL per connection)", n)
	}
	waitHealth(t, ctx, h, "healthy")
}

// TestBotOwnMessagesIgnored: the bot's DM reply comes back from Slack as a
// message.im event and must not trigger it again; other bots are ignored
// by default; a person still triggers.
func TestBotOwnMessagesIgnored(t *testing.T) {
	t.Parallel()
	ctx := e2etest.Ctx(t, time.Minute)
	fake := fakeslack.New(t, fakeslack.Options{EchoBotMessages: true})
	h := spawn(t, ctx, "", socketEnv(fake, nil))
	watch(t, ctx, h)
	if err := fake.WaitConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}
	resp := e2etest.RequestContext(t, ctx, h, "slack/send_dm", map[string]string{"user_id": "U1", "text": "On it!"})
	if resp.Error != nil {
		t.Fatalf("send_dm: %s", errorf(resp))
	}
	// Slack echoes the bot's DM as a message.im event from the bot.
	echoes := fake.Echoes()
	if len(echoes) != 1 {
		t.Fatalf("the fake echoed %d messages, want 1", len(echoes))
	}
	other := fakeslack.DirectMessage("D1", "U2", "beep", fake.NextTS())
	other["bot_id"] = "B0THER"
	own := fakeslack.Mention("C1", "U0BOT", "<@U0BOT> talking to myself", fake.NextTS())
	person := fakeslack.DirectMessage("D1", "U1", "thanks", fake.NextTS())
	settle(t, ctx, fake, echoes[0], send(t, fake, "", 0, other), send(t, fake, "", 0, own), send(t, fake, "", 0, person))
	got := events(t, h)
	if len(got) != 1 || got[0].Payload["text"] != "thanks" {
		t.Fatalf("events = %+v, want only the person's DM", got)
	}
}

// TestInvalidAuth: a rejected app token makes health unhealthy with a
// clear last_error and is retried slowly, not in a loop; a rejected bot
// token fails the watch itself.
func TestInvalidAuth(t *testing.T) {
	t.Parallel()
	ctx := e2etest.Ctx(t, time.Minute)
	fake := fakeslack.New(t, fakeslack.Options{})
	fake.SetOpenError("invalid_auth")
	h := spawn(t, ctx, "", socketEnv(fake, nil))
	watch(t, ctx, h)
	last := waitHealth(t, ctx, h, "unhealthy")
	if !strings.Contains(last, "invalid_auth") || !strings.Contains(last, "app token") {
		t.Fatalf("last_error %q does not say the app token was rejected", last)
	}
	time.Sleep(700 * time.Millisecond)
	if n := fake.Opens(); n != 1 {
		t.Fatalf("apps.connections.open called %d times within a second of invalid_auth; want 1 (no spinning)", n)
	}

	// Wrong bot token: Slack says invalid_auth to auth.test; watch fails
	// with a message the testkit classifies as configuration.
	h2 := spawn(t, ctx, "", socketEnv(fake, map[string]string{"SLACK_BOT_TOKEN": "xoxb-revoked"}))
	resp := e2etest.RequestContext(t, ctx, h2, "trigger/watch", json.RawMessage(`{}`))
	if resp.Error == nil || resp.Error.Code != -32603 || resp.Error.Category() != "unavailable" ||
		resp.Error.Message != "backend unavailable: SLACK_BOT_TOKEN auth failed: invalid_auth" {
		t.Fatalf("watch with a rejected bot token: %s", errorf(resp))
	}
	if strings.Contains(h2.Stderr(), "xoxb-revoked") {
		t.Fatal("the bot token reached the log")
	}
}

// TestMissingConfiguration: watch fails before acknowledging, with the
// variable's name and "unset" (the testkit's skip classifier), and health
// says the same; a trigger_id in the watch config stands in for the env.
func TestMissingConfiguration(t *testing.T) {
	t.Parallel()
	ctx := e2etest.Ctx(t, time.Minute)
	fake := fakeslack.New(t, fakeslack.Options{})
	cases := []struct {
		name string
		env  map[string]string
		msg  string
	}{
		{"no tokens", map[string]string{"SLACK_TRIGGER_ID": triggerID}, "backend unavailable: SLACK_APP_TOKEN unset"},
		{"no bot token", map[string]string{"SLACK_APP_TOKEN": "xapp-1", "SLACK_TRIGGER_ID": triggerID}, "backend unavailable: SLACK_BOT_TOKEN unset"},
		{"no trigger id", fake.Env(), "backend unavailable: SLACK_TRIGGER_ID unset"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := spawn(t, ctx, "", tc.env)
			resp := e2etest.RequestContext(t, ctx, h, "trigger/watch", json.RawMessage(`{}`))
			if resp.Error == nil || resp.Error.Code != -32603 || resp.Error.Category() != "unavailable" ||
				!strings.HasPrefix(resp.Error.Message, tc.msg) {
				t.Fatalf("watch: %s, want -32603 unavailable %q", errorf(resp), tc.msg)
			}
			st, last := health(t, ctx, h)
			if st != "unhealthy" || !strings.Contains(last, "unset") {
				t.Fatalf("health %s %q", st, last)
			}
		})
	}
	t.Run("trigger id from watch config", func(t *testing.T) {
		h := spawn(t, ctx, "", fake.Env())
		resp := e2etest.RequestContext(t, ctx, h, "trigger/watch", map[string]any{"config": map[string]string{"trigger_id": "from-yaml"}, "cursor": "ignored"})
		if resp.Error != nil {
			t.Fatalf("watch: %s", errorf(resp))
		}
		if err := fake.WaitConnections(ctx, 1); err != nil {
			t.Fatal(err)
		}
		send(t, fake, "", 0, fakeslack.DirectMessage("D9", "U1", "hello", fake.NextTS()))
		if got := waitEvents(t, ctx, h, 1); got[0].Trigger != "from-yaml" {
			t.Fatalf("trigger_id %q", got[0].Trigger)
		}
	})
}

// TestExitWithLiveSocket: EOF, exit and the daemon's ladder all end the
// process promptly while the socket loop runs.
func TestExitWithLiveSocket(t *testing.T) {
	t.Parallel()
	ctx := e2etest.Ctx(t, time.Minute)
	fake := fakeslack.New(t, fakeslack.Options{})
	stops := []struct {
		name string
		stop func(h *fakehost.Host) (time.Duration, bool)
	}{
		{"stdin EOF", func(h *fakehost.Host) (time.Duration, bool) {
			rep, _ := h.Shutdown(ctx, fakehost.LadderTestkit)
			return rep.Elapsed, rep.ExitedByItself && rep.ExitCode == 0
		}},
		{"exit notification", func(h *fakehost.Host) (time.Duration, bool) {
			start := time.Now()
			_ = h.Notify("exit", nil)
			ok, code := h.Wait(2 * time.Second)
			return time.Since(start), ok && code == 0
		}},
		{"daemon ladder", func(h *fakehost.Host) (time.Duration, bool) {
			rep, _ := h.Shutdown(ctx, fakehost.LadderDaemon)
			return 0, rep.ExitedByItself && rep.ExitCode == 0 && rep.ShutdownReply != nil
		}},
	}
	for i, s := range stops {
		h := spawn(t, ctx, "", socketEnv(fake, nil))
		watch(t, ctx, h)
		if err := fake.WaitConnections(ctx, i+1); err != nil {
			t.Fatal(err)
		}
		waitHealth(t, ctx, h, "healthy")
		elapsed, ok := s.stop(h)
		if !ok {
			t.Fatalf("%s: the plugin did not exit cleanly by itself", s.name)
		}
		if elapsed > 500*time.Millisecond {
			t.Errorf("%s: exit took %v with a live socket, want < 500ms", s.name, elapsed)
		}
	}
}

// TestLogsStayOnStderr: at debug level slack-go's own logs flow, and all
// of them go to stderr as JSON; stdout carries frames only (any stray byte
// is a fakehost violation) and no token is ever logged.
func TestLogsStayOnStderr(t *testing.T) {
	t.Parallel()
	ctx := e2etest.Ctx(t, time.Minute)
	fake := fakeslack.New(t, fakeslack.Options{})
	h := spawn(t, ctx, "", socketEnv(fake, map[string]string{"ANIMUS_PLUGIN_LOG_LEVEL": "debug"}))
	watch(t, ctx, h)
	if err := fake.WaitConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}
	send(t, fake, "", 0, fakeslack.Mention("C1", "U1", "<@U0BOT> hi", fake.NextTS()))
	waitEvents(t, ctx, h, 1)
	if err := h.WaitStderr(ctx, `"source":"slack-go"`); err != nil {
		t.Fatalf("slack-go debug logs did not reach stderr: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(h.Stderr()), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("stderr line is not JSON: %s", line)
		}
	}
	for _, secret := range []string{fake.Options().AppToken, fake.Options().BotToken} {
		if strings.Contains(h.Stderr(), secret) {
			t.Fatalf("a token reached stderr")
		}
	}
	if v := h.Violations(); len(v) > 0 {
		t.Fatalf("stdout violations: %v", v)
	}
}
