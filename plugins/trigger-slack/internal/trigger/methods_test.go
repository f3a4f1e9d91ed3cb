package trigger

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
)

// TestOutboundMethodsOnTheWire: the slack/* methods registered by the
// service reach Slack with the bot token and answer with Slack's whole
// response, even one whose message slack-go could not decode. Slack's
// answers are given verbatim (Failure.Body), since the results must match
// them byte for byte.
func TestOutboundMethodsOnTheWire(t *testing.T) {
	const oddPost = `{"ok":true,"channel":"C1","ts":"1715701400.000100","message":{"type":"message","blocks":"not an array"}}`
	cases := []struct {
		name    string
		method  string
		params  any
		answers map[string]string // Slack method → its answer (200)
		result  string            // exact result ("" = an error)
		code    int
		msg     string
		form    map[string]map[string]string // Slack method → form values it must have seen
	}{
		{name: "post with an undecodable message in the answer", method: "slack/chat_post_message",
			params:  map[string]any{"channel": "C1", "text": "done", "thread_ts": "1.1"},
			answers: map[string]string{"chat.postMessage": oddPost},
			result:  oddPost,
			form:    map[string]map[string]string{"chat.postMessage": {"channel": "C1", "text": "done", "thread_ts": "1.1"}}},
		{name: "ephemeral", method: "slack/chat_post_ephemeral",
			params:  map[string]any{"channel": "C1", "user": "U1", "text": "psst"},
			answers: map[string]string{"chat.postEphemeral": `{"ok":true,"message_ts":"1.5"}`},
			result:  `{"ok":true,"message_ts":"1.5"}`,
			form:    map[string]map[string]string{"chat.postEphemeral": {"channel": "C1", "user": "U1", "text": "psst"}}},
		{name: "dm", method: "slack/send_dm",
			params: map[string]any{"user_id": "U7", "text": "hello"},
			answers: map[string]string{
				"conversations.open": `{"ok":true,"channel":{"id":"D7","latest":{"blocks":7}}}`,
				"chat.postMessage":   `{"ok":true,"channel":"D7","ts":"2.2"}`,
			},
			result: `{"ok":true,"channel":"D7","ts":"2.2"}`,
			form: map[string]map[string]string{
				"conversations.open": {"users": "U7"},
				"chat.postMessage":   {"channel": "D7", "text": "hello"},
			}},
		{name: "slack refuses", method: "slack/chat_post_message",
			params:  map[string]any{"channel": "C404", "text": "x"},
			answers: map[string]string{"chat.postMessage": `{"ok":false,"error":"channel_not_found","message":{"blocks":"?"}}`},
			code:    -32603, msg: "slack api error: channel_not_found"},
		{name: "invalid params never reach slack", method: "slack/chat_post_message",
			params: map[string]any{"channel": "C1"},
			code:   -32602, msg: "text or blocks must not be empty",
			form: map[string]map[string]string{"chat.postMessage": nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeSlack(t)
			for m, body := range tc.answers {
				fake.FailNext(m, fakeslack.Failure{Body: body})
			}
			h := startHost(t, socketEnv(fake, nil), t.TempDir()) // outbound needs no watch
			res, e := h.call(tc.method, tc.params)
			if tc.result != "" {
				if e != nil || string(res) != tc.result {
					t.Fatalf("%s = %s, %+v; want %s", tc.method, res, e, tc.result)
				}
			} else if e == nil || e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("%s = %s, %+v; want error %d %q", tc.method, res, e, tc.code, tc.msg)
			}
			for method, want := range tc.form {
				calls := fake.Calls(method)
				if want == nil {
					if len(calls) != 0 {
						t.Fatalf("%s was called: %v", method, calls)
					}
					continue
				}
				if len(calls) != 1 {
					t.Fatalf("%d calls to %s, want 1", len(calls), method)
				}
				// A verbatim answer skips the fake's token check: check here.
				if got := calls[0].Form.Get("token"); got != fake.Options().BotToken {
					t.Fatalf("%s reached Slack with token %q, want the bot token", method, got)
				}
				for k, v := range want {
					if got := calls[0].Form.Get(k); got != v {
						t.Fatalf("%s %s = %q, want %q", method, k, got, v)
					}
				}
			}
		})
	}
}

// TestSchemaAndAckRequest: trigger/schema claims exactly what the plugin
// does, and trigger/ack as a request is answered even before a watch.
func TestSchemaAndAckRequest(t *testing.T) {
	fake := newFakeSlack(t)
	h := startHost(t, socketEnv(fake, nil), t.TempDir())
	cases := []struct {
		method string
		params any
		result string
		code   int
	}{
		{"trigger/schema", nil, `{"kinds":["slack.mention","slack.dm"],"supports_resume":false,"supports_dedup":true,"supports_ack":true}`, 0},
		{"trigger/ack", map[string]string{"event_id": "slack:T1/C1/1.1", "status": "queued"}, `{"event_id":"slack:T1/C1/1.1","acked":true}`, 0},
		{"trigger/ack", map[string]string{"event_id": " "}, "", -32602},
		{"trigger/ack", map[string]string{"status": "queued"}, "", -32602},
	}
	for _, tc := range cases {
		res, e := h.call(tc.method, tc.params)
		if tc.code != 0 {
			if e == nil || e.Code != tc.code {
				t.Fatalf("%s %v = %s, %+v; want error %d", tc.method, tc.params, res, e, tc.code)
			}
			continue
		}
		if e != nil || !jsonEqual(res, tc.result) {
			t.Fatalf("%s = %s, %+v; want %s", tc.method, res, e, tc.result)
		}
	}
	// Before any watch there is no seen-set to record into.
	h.waitLog("ack not recorded", "dedup store is closed")
}

func jsonEqual(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && string(mustJSON(x)) == string(mustJSON(y))
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
