package conformance

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// TriggerSlackSuite holds the animus-trigger-slack checks that go beyond
// the trigger kind suite (trigger-slack.md §3.5, §5.6, §5.7 and the plugin's
// issue). They need no Slack: what they assert holds with or without
// tokens, except slack-watch-stream-exit, which skips unless the target's
// environment lets a watch open (a fake Slack's SLACK_API_BASE and tokens).
func TriggerSlackSuite() []Scenario {
	return []Scenario{
		{"trigger-slack", "schema-claims", slackSchemaClaims},
		{"trigger-slack", "ack-request-reply", slackAckRequest},
		{"trigger-slack", "watch-config-validated", slackWatchConfig},
		{"trigger-slack", "outbound-validation", slackOutboundValidation},
		{"trigger-slack", "watch-stream-exit", slackWatchStreamExit},
	}
}

// slackSchemaClaims: the schema claims exactly what the plugin does: two
// kinds, dedup and ack, no resume (no cursor is kept).
func slackSchemaClaims(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	resp, err := call(ctx, h, shortCallBudget, "trigger/schema", json.RawMessage(`{}`))
	if err != nil {
		return failf("%v", err)
	}
	var got map[string]any
	if err := wantResult(resp, &got); err != nil {
		return failf("%v", err)
	}
	want := map[string]any{"kinds": []any{"slack.mention", "slack.dm"}, "supports_resume": false, "supports_dedup": true, "supports_ack": true}
	if !reflect.DeepEqual(got, want) {
		return failf("trigger/schema = %s, want %v", resp.Result, want)
	}
	return pass()
}

// slackAckRequest: trigger/ack as a request is answered {event_id, acked},
// also for an id this process never emitted; an empty id is -32602.
func slackAckRequest(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	resp, err := call(ctx, h, shortCallBudget, "trigger/ack", map[string]string{"event_id": "slack:T1/C1/1.000001", "status": "queued"})
	if err != nil {
		return failf("%v", err)
	}
	if resp.Error != nil || string(resp.Result) != `{"event_id":"slack:T1/C1/1.000001","acked":true}` {
		return failf("trigger/ack request: %s", resp.Raw)
	}
	resp, err = call(ctx, h, shortCallBudget, "trigger/ack", map[string]string{"event_id": ""})
	if err != nil {
		return failf("%v", err)
	}
	if err := wantError(resp, -32602, "invalid_request"); err != nil {
		return failf("trigger/ack with an empty event_id: %v", err)
	}
	return pass()
}

// slackWatchConfig: a config that is not an object, or a trigger_id that
// is not a string, is bad params (-32602), checked before anything else.
func slackWatchConfig(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	for _, params := range []string{`{"config":"slack"}`, `{"config":{"trigger_id":7}}`} {
		resp, err := call(ctx, h, shortCallBudget, "trigger/watch", json.RawMessage(params))
		if err != nil {
			return failf("%v", err)
		}
		if err := wantError(resp, -32602, "invalid_request"); err != nil {
			return failf("trigger/watch %s: %v", params, err)
		}
	}
	return pass()
}

// slackOutboundValidation: the outbound methods validate before any HTTP
// request (the reference's messages), so these hold without a network.
func slackOutboundValidation(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	cases := []struct {
		method string
		params any
		msg    string
	}{
		{"slack/chat_post_message", nil, "missing params"},
		{"slack/chat_post_message", map[string]string{"text": "x"}, "channel must not be empty"},
		{"slack/chat_post_message", map[string]string{"channel": "C1"}, "text or blocks must not be empty"},
		{"slack/chat_post_ephemeral", map[string]string{"channel": "C1", "text": "x"}, "user must not be empty"},
		{"slack/send_dm", map[string]string{"text": "x"}, "user_id must not be empty"},
	}
	for _, c := range cases {
		resp, err := call(ctx, h, shortCallBudget, c.method, c.params)
		if err != nil {
			return failf("%v", err)
		}
		if err := wantError(resp, -32602, "invalid_request"); err != nil {
			return failf("%s %v: %v", c.method, c.params, err)
		}
		if !strings.Contains(resp.Error.Message, c.msg) {
			return failf("%s: message %q, want %q", c.method, resp.Error.Message, c.msg)
		}
	}
	return pass()
}

// slackWatchStreamExit: with a live stream (the socket loop running), stdin
// EOF ends the process within the generic 500 ms budget.
func slackWatchStreamExit(ctx context.Context, s *Session) Outcome {
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	resp, err := call(ctx, h, shortCallBudget, "trigger/watch", json.RawMessage(`{}`))
	if err != nil {
		return failf("%v", err)
	}
	if resp.Error != nil {
		return skipf("no stream to stop: trigger/watch: %s", resp.Error.Message)
	}
	time.Sleep(300 * time.Millisecond) // let the stream connect
	rep, err := h.Shutdown(ctx, fakehost.LadderTestkit)
	if err != nil {
		return failf("%v", err)
	}
	if !rep.ExitedByItself || rep.Elapsed > idleExitBudget {
		return failf("with a live stream, exit took %v (by itself: %v), want < %v", rep.Elapsed, rep.ExitedByItself, idleExitBudget)
	}
	return pass()
}
