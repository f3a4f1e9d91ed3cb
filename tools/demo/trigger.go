package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
)

// triggerScript walks animus-trigger-slack through a day in Slack against
// a local fake Slack: a missing token failing loudly, Socket Mode, a
// mention becoming a flat trigger/event, Slack's retries suppressed, the
// daemon's ack, a threaded reply and a DM whose echo does not loop, a
// reconnect, and a prompt exit.
func triggerScript() Script {
	return Script{
		Binary: "animus-trigger-slack",
		Kind:   "trigger_backend",
		Title:  "animus-trigger-slack: Slack mentions and DMs start workflows",
		Run:    runTrigger,
	}
}

func runTrigger(ctx context.Context, d *Demo) (string, error) {
	fake := fakeslack.Start(fakeslack.Options{EchoBotMessages: true})
	defer fake.Close()
	env := fake.Env()
	env["SLACK_TRIGGER_ID"] = "slack-incoming"

	d.Step("Misconfigured: no tokens. trigger/watch fails before acknowledging, naming what is unset")
	bare, err := d.Spawn(ctx, "animus-trigger-slack", func(c *fakehost.Config) {
		c.Env = map[string]string{"SLACK_APP_TOKEN": "", "SLACK_BOT_TOKEN": ""} // whatever the caller's shell has
	})
	if err != nil {
		return "", err
	}
	if _, err := bare.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}); err != nil {
		return "", err
	}
	resp, err := d.Call(ctx, bare, "trigger/watch", json.RawMessage(`{}`))
	if err != nil {
		return "", err
	}
	if err := d.Expect(resp.Error != nil && strings.Contains(resp.Error.Message, "SLACK_APP_TOKEN unset"), "%s", errText(resp)); err != nil {
		return "", err
	}
	if _, err := bare.Shutdown(ctx, fakehost.LadderDaemon); err != nil {
		return "", err
	}

	d.Step("A fake Slack on %s; spawn with its tokens and SLACK_TRIGGER_ID=slack-incoming, then trigger/watch {}", fake.APIBase())
	h, err := d.Spawn(ctx, "animus-trigger-slack", func(c *fakehost.Config) { c.Env = env; c.EnvMode = fakehost.EnvDaemonNarrow })
	if err != nil {
		return "", err
	}
	if _, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}); err != nil {
		return "", err
	}
	if resp, err = d.Call(ctx, h, "trigger/watch", json.RawMessage(`{}`)); err != nil {
		return "", err
	}
	if err := fake.WaitConnections(ctx, 1); err != nil {
		return "", err
	}
	if err := d.Expect(resp.Error == nil, "watching; Socket Mode connected (apps.connections.open, hello, PINGs)"); err != nil {
		return "", err
	}

	d.Step(`Someone writes "@animus please review #42" in #eng: Slack sends an events_api envelope`)
	ts := fake.NextTS()
	mention := fakeslack.Callback(fake.Options().TeamID, "EvDEMO1", fakeslack.Mention("C0ENG", "U0ALICE", "<@U0BOT> please review #42", ts))
	if err := fake.Send(fakeslack.EventsAPI("env-demo-1", 0, mention)); err != nil {
		return "", err
	}
	lat, err := fake.WaitAck(ctx, "env-demo-1")
	if err != nil {
		return "", err
	}
	ev, err := waitTriggerEvents(ctx, h, 1)
	d.Frames(h)
	if err != nil {
		return "", err
	}
	if err := d.Expect(ev[0]["event_id"] == "slack:T0FAKE/C0ENG/"+ts && ev[0]["trigger_id"] == "slack-incoming",
		"envelope acked in %v; flat event %v for trigger %v", lat.Round(time.Microsecond), ev[0]["event_id"], ev[0]["trigger_id"]); err != nil {
		return "", err
	}

	d.Step("Slack redelivers (retry_attempt 1) and the same envelope arrives twice more: nothing new is emitted")
	for i, retry := range []int{1, 0, 2} {
		if err := fake.Send(fakeslack.EventsAPI(fmt.Sprintf("env-demo-r%d", i), retry, mention)); err != nil {
			return "", err
		}
		if _, err := fake.WaitAck(ctx, fmt.Sprintf("env-demo-r%d", i)); err != nil {
			return "", err
		}
	}
	time.Sleep(200 * time.Millisecond)
	ev, _ = waitTriggerEvents(ctx, h, 1)
	if err := d.Expect(len(ev) == 1, "3 redeliveries acked, still 1 trigger/event (persisted seen-set)"); err != nil {
		return "", err
	}

	d.Step("The daemon routes it and acks with a notification, which is never answered")
	if err := h.Notify("trigger/ack", map[string]string{"event_id": "slack:T0FAKE/C0ENG/" + ts, "status": "queued"}); err != nil {
		return "", err
	}
	time.Sleep(50 * time.Millisecond)
	d.Frames(h)
	if err := d.Expect(len(h.Violations()) == 0, "trigger/ack {status: queued} recorded, no reply on the wire"); err != nil {
		return "", err
	}

	d.Step("A workflow phase answers in the thread, and DMs Alice; Slack echoes the DM back as a message.im event")
	if resp, err = d.Call(ctx, h, "slack/chat_post_message", map[string]string{"channel": "C0ENG", "thread_ts": ts, "text": "On it: reviewing #42"}); err != nil {
		return "", err
	}
	if err := d.Expect(resp.Error == nil && strings.Contains(string(resp.Result), `"ok":true`), "chat.postMessage: %s", shortJSON(resp.Result, 90)); err != nil {
		return "", err
	}
	if resp, err = d.Call(ctx, h, "slack/send_dm", map[string]string{"user_id": "U0ALICE", "text": "Review posted"}); err != nil {
		return "", err
	}
	echoes := fake.Echoes()
	for _, id := range echoes {
		if _, err := fake.WaitAck(ctx, id); err != nil {
			return "", err
		}
	}
	time.Sleep(200 * time.Millisecond)
	ev, _ = waitTriggerEvents(ctx, h, 1)
	if err := d.Expect(resp.Error == nil && len(echoes) == 1 && len(ev) == 1, "the bot's own DM came back, was acked and ignored: no loop"); err != nil {
		return "", err
	}

	d.Step(`Slack asks for a refresh ({"type":"disconnect"}); the plugin reconnects and Alice's DM gets through`)
	if err := fake.Disconnect("refresh_requested"); err != nil {
		return "", err
	}
	if err := fake.WaitConnections(ctx, 2); err != nil {
		return "", err
	}
	dm := fakeslack.Callback(fake.Options().TeamID, "EvDEMO2", fakeslack.DirectMessage("D0ALICE", "U0ALICE", "thanks! can you also fix the flaky test?", fake.NextTS()))
	if err := fake.Send(fakeslack.EventsAPI("env-demo-2", 0, dm)); err != nil {
		return "", err
	}
	ev, err = waitTriggerEvents(ctx, h, 2)
	d.Frames(h)
	if err != nil {
		return "", err
	}
	payload, _ := ev[1]["payload"].(map[string]any)
	if err := d.Expect(payload["kind"] == "slack.dm", "reconnected (%d connections); slack.dm event %v", fake.Connections(), ev[1]["event_id"]); err != nil {
		return "", err
	}

	d.Step("health/check, then the daemon's shutdown ladder with the socket still open")
	if resp, err = d.Call(ctx, h, "health/check", nil); err != nil {
		return "", err
	}
	if err := d.Expect(strings.Contains(string(resp.Result), `"healthy"`), "%s", resp.Result); err != nil {
		return "", err
	}
	rep, err := h.Shutdown(ctx, fakehost.LadderDaemon)
	d.Frames(h)
	if err != nil {
		return "", err
	}
	if err := d.Expect(rep.ExitedByItself && rep.ExitCode == 0, "exited by itself with code %d, %v after shutdown", rep.ExitCode, rep.Elapsed.Round(time.Millisecond)); err != nil {
		return "", err
	}
	return fmt.Sprintf("unset token refused, mention → flat event, 3 retries suppressed, ack, reply + DM without loop, reconnect, exit in %v",
		rep.Elapsed.Round(time.Millisecond)), nil
}

// waitTriggerEvents waits for n trigger/event notifications and returns
// all of them decoded.
func waitTriggerEvents(ctx context.Context, h *fakehost.Host, n int) ([]map[string]any, error) {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	seen := 0
	_, err := h.WaitNotification(wctx, func(nt fakehost.Notification) bool {
		if nt.Method == "trigger/event" {
			seen++
		}
		return seen >= n
	})
	var out []map[string]any
	for _, nt := range h.Notifications() {
		if nt.Method == "trigger/event" {
			var m map[string]any
			_ = json.Unmarshal(nt.Params, &m)
			out = append(out, m)
		}
	}
	if err != nil {
		return out, fmt.Errorf("waiting for %d trigger/event: %w", n, err)
	}
	return out, nil
}
