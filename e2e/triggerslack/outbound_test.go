package triggerslack

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// TestOutboundMethods: slack/* calls reach the fake with the right params,
// return Slack's response, and map ok:false, 429 and 5xx to the reference
// plugin's error categories.
func TestOutboundMethods(t *testing.T) {
	t.Parallel()
	ctx := e2etest.Ctx(t, time.Minute)
	fake := fakeslack.New(t, fakeslack.Options{})
	h := spawn(t, ctx, "", socketEnv(fake, nil)) // outbound needs no watch

	post := map[string]any{"channel": "C1", "text": "Review done", "thread_ts": "1715700000.000001",
		"blocks": []any{map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": "*Review done*"}}}}
	cases := []struct {
		name     string
		method   string
		params   any
		inject   []fakeslack.Failure
		code     int    // 0 = success
		category string // error data.category
		message  string
		calls    int // calls to the Slack method (chat.postMessage unless noted)
		check    func(t *testing.T, result json.RawMessage, data map[string]any)
	}{
		{name: "post ok", method: "slack/chat_post_message", params: post, calls: 1,
			check: func(t *testing.T, r json.RawMessage, _ map[string]any) {
				var res struct {
					OK      bool   `json:"ok"`
					Channel string `json:"channel"`
					TS      string `json:"ts"`
					Message struct {
						ThreadTS string `json:"thread_ts"`
					} `json:"message"`
				}
				if json.Unmarshal(r, &res) != nil || !res.OK || res.Channel != "C1" || res.TS == "" || res.Message.ThreadTS != "1715700000.000001" {
					t.Fatalf("result %s", r)
				}
				c := fake.Calls("chat.postMessage")
				last := c[len(c)-1].Form
				if last.Get("text") != "Review done" || last.Get("thread_ts") != "1715700000.000001" || !strings.Contains(last.Get("blocks"), "*Review done*") {
					t.Fatalf("Slack saw %v", last)
				}
			}},
		{name: "ok false", method: "slack/chat_post_message", params: post, inject: []fakeslack.Failure{{Error: "not_in_channel"}},
			code: -32603, category: "slack_error", message: "slack api error: not_in_channel", calls: 1,
			check: func(t *testing.T, _ json.RawMessage, d map[string]any) {
				if d["slack_error"] != "not_in_channel" || d["body"] == nil {
					t.Fatalf("data %v", d)
				}
			}},
		{name: "429 once is retried", method: "slack/chat_post_message", params: post,
			inject: []fakeslack.Failure{{Status: 429, RetryAfter: "1"}}, calls: 2},
		{name: "429 twice", method: "slack/chat_post_message", params: post,
			inject: []fakeslack.Failure{{Status: 429, RetryAfter: "1"}, {Status: 429, RetryAfter: "1"}},
			code:   -32603, category: "http", message: "slack http 429", calls: 2,
			check: func(t *testing.T, _ json.RawMessage, d map[string]any) {
				if d["status"] != float64(429) || d["retry_after_ms"] != float64(1000) {
					t.Fatalf("data %v", d)
				}
			}},
		{name: "503", method: "slack/chat_post_message", params: post, inject: []fakeslack.Failure{{Status: 503}},
			code: -32603, category: "http", message: "slack http 503", calls: 1,
			check: func(t *testing.T, _ json.RawMessage, d map[string]any) {
				if d["status"] != float64(503) || !strings.Contains(d["body"].(string), "Slack is having trouble") {
					t.Fatalf("data %v", d)
				}
			}},
		{name: "blank channel", method: "slack/chat_post_message", params: map[string]any{"channel": " ", "text": "x"},
			code: -32602, category: "invalid_request", message: "channel must not be empty"},
		{name: "no content", method: "slack/chat_post_message", params: map[string]any{"channel": "C1"},
			code: -32602, category: "invalid_request", message: "text or blocks must not be empty"},
		{name: "missing params", method: "slack/chat_post_message", params: nil,
			code: -32602, category: "invalid_request", message: "missing params"},
		{name: "wrong type", method: "slack/chat_post_message", params: map[string]any{"channel": 7},
			code: -32602, category: "invalid_request", message: `field "channel"`},
		{name: "ephemeral ok", method: "slack/chat_post_ephemeral", params: map[string]any{"channel": "C1", "user": "U1", "text": "only you"},
			check: func(t *testing.T, r json.RawMessage, _ map[string]any) {
				var res struct {
					OK        bool   `json:"ok"`
					MessageTS string `json:"message_ts"`
				}
				if json.Unmarshal(r, &res) != nil || !res.OK || res.MessageTS == "" {
					t.Fatalf("result %s", r)
				}
			}},
		{name: "ephemeral without user", method: "slack/chat_post_ephemeral", params: map[string]any{"channel": "C1", "text": "x"},
			code: -32602, category: "invalid_request", message: "user must not be empty"},
		{name: "send_dm ok", method: "slack/send_dm", params: map[string]any{"user_id": "U77", "text": "Your build is green"}, calls: 1,
			check: func(t *testing.T, r json.RawMessage, _ map[string]any) {
				if !strings.Contains(string(r), `"channel":"D77"`) {
					t.Fatalf("result %s", r)
				}
				c := fake.Calls("chat.postMessage")
				if c[len(c)-1].Form.Get("channel") != "D77" {
					t.Fatalf("posted to %v", c[len(c)-1].Form)
				}
			}},
		{name: "send_dm unknown user", method: "slack/send_dm", params: map[string]any{"user_id": "U404", "text": "x"},
			code: -32603, category: "slack_error", message: "slack api error: user_not_found"},
	}
	for _, tc := range cases {
		before := len(fake.Calls("chat.postMessage"))
		fake.FailNext("chat.postMessage", tc.inject...)
		resp := e2etest.RequestContext(t, ctx, h, tc.method, tc.params)
		calls := len(fake.Calls("chat.postMessage")) - before
		if calls != tc.calls {
			t.Errorf("%s: %d chat.postMessage calls, want %d", tc.name, calls, tc.calls)
		}
		if tc.code == 0 {
			if resp.Error != nil {
				t.Errorf("%s: %s", tc.name, errorf(resp))
				continue
			}
			if tc.check != nil {
				tc.check(t, resp.Result, nil)
			}
			continue
		}
		if resp.Error == nil || resp.Error.Code != tc.code || resp.Error.Category() != tc.category || !strings.Contains(resp.Error.Message, tc.message) {
			t.Errorf("%s: %s, want %d %s %q", tc.name, errorf(resp), tc.code, tc.category, tc.message)
			continue
		}
		if tc.check != nil {
			var data map[string]any
			_ = json.Unmarshal(resp.Error.Data, &data)
			tc.check(t, nil, data)
		}
	}

	// Without a bot token nothing is sent.
	h2 := spawn(t, ctx, "", map[string]string{"SLACK_API_BASE": fake.APIBase()})
	before := len(fake.Calls(""))
	resp := e2etest.RequestContext(t, ctx, h2, "slack/chat_post_message", map[string]string{"channel": "C1", "text": "x"})
	if resp.Error == nil || resp.Error.Code != -32603 || resp.Error.Category() != "missing_token" || resp.Error.Message != "SLACK_BOT_TOKEN unset" {
		t.Fatalf("without a bot token: %s", errorf(resp))
	}
	if len(fake.Calls("")) != before {
		t.Fatal("a request went to Slack without a token")
	}
}
