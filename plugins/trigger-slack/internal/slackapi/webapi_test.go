package slackapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// outboundCall runs one outbound method against c with fixed params.
type outboundCall func(ctx context.Context, c *Client) (json.RawMessage, error)

func postCall(ctx context.Context, c *Client) (json.RawMessage, error) {
	return c.PostMessage(ctx, &PostMessageParams{Channel: "C1", Text: "done"})
}

func ephemeralCall(ctx context.Context, c *Client) (json.RawMessage, error) {
	return c.PostEphemeral(ctx, &PostEphemeralParams{Channel: "C1", User: "U1", Text: "psst"})
}

func dmCall(ctx context.Context, c *Client) (json.RawMessage, error) {
	return c.SendDM(ctx, &SendDMParams{UserID: "U7", Text: "hello"})
}

// TestSuccessWithUndecodableParts: an ok:true answer is a success whatever
// else it holds. Each of these answers made slack-go fail the call after
// Slack had posted the message (a retrying host then posted it twice).
func TestSuccessWithUndecodableParts(t *testing.T) {
	cases := []struct {
		name    string
		method  string // the Slack method whose answer is scripted
		body    string
		open    string // conversations.open answer, for send_dm
		call    outboundCall
		channel string // expected channel in the result ("" = none)
		tsField string
		ts      string // "" = Slack sent none: success with a warning
	}{
		{name: "blocks is a string", method: "chat.postMessage", call: postCall,
			body:    `{"ok":true,"channel":"C1","ts":"1715701400.000100","message":{"type":"message","text":"done","blocks":"not an array"}}`,
			channel: "C1", tsField: "ts", ts: "1715701400.000100"},
		{name: "blocks is an object", method: "chat.postMessage", call: postCall,
			body:    `{"ok":true,"channel":"C1","ts":"1.1","message":{"blocks":{"type":"section"}}}`,
			channel: "C1", tsField: "ts", ts: "1.1"},
		{name: "known block of an unexpected shape", method: "chat.postMessage", call: postCall,
			body:    `{"ok":true,"channel":"C1","ts":"1.2","message":{"blocks":[{"type":"section","text":"plain string"}]}}`,
			channel: "C1", tsField: "ts", ts: "1.2"},
		{name: "unknown block type and element", method: "chat.postMessage", call: postCall,
			body:    `{"ok":true,"channel":"C1","ts":"1.3","message":{"blocks":[{"type":"hologram","depth":3},{"type":"rich_text","elements":[{"type":"rich_text_section","elements":[{"type":"emoji","name":"x","unicode":7}]}]}]}}`,
			channel: "C1", tsField: "ts", ts: "1.3"},
		{name: "other odd fields", method: "chat.postMessage", call: postCall,
			body:    `{"ok":true,"channel":"C1","ts":"1.4","message":"gone","response_metadata":[1,2],"warning":{"x":1},"new_field":null}`,
			channel: "C1", tsField: "ts", ts: "1.4"},
		{name: "no ts", method: "chat.postMessage", call: postCall,
			body: `{"ok":true,"channel":"C1","message":{"blocks":"?"}}`, channel: "C1", tsField: "ts"},
		{name: "ts of another type", method: "chat.postMessage", call: postCall,
			body: `{"ok":true,"channel":"C1","ts":1715701400.0001}`, channel: "C1", tsField: "ts"},
		{name: "ephemeral with odd extras", method: "chat.postEphemeral", call: ephemeralCall,
			body:    `{"ok":true,"message_ts":"1.5","message":{"blocks":"nope"},"response_metadata":{"warnings":"superfluous_charset"}}`,
			tsField: "message_ts", ts: "1.5"},
		{name: "send_dm with odd answers from both methods", method: "chat.postMessage", call: dmCall,
			open:    `{"ok":true,"no_op":"maybe","channel":{"id":"D42","created":"yesterday","latest":{"blocks":"x"},"is_im":"yes"}}`,
			body:    `{"ok":true,"channel":"D42","ts":"1.6","message":{"blocks":[{"type":"section","text":7}]}}`,
			channel: "D42", tsField: "ts", ts: "1.6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			c, _ := client(s, botToken)
			var logs bytes.Buffer
			c.log = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			s.FailNext(tc.method, fakeslack.Failure{Body: tc.body})
			if tc.open != "" {
				s.FailNext("conversations.open", fakeslack.Failure{Body: tc.open})
			}
			res, err := tc.call(context.Background(), c)
			if err != nil {
				t.Fatalf("call failed on an ok:true answer: %v", err)
			}
			if string(res) != tc.body {
				t.Fatalf("result = %s, want Slack's answer as sent", res)
			}
			var got map[string]any
			if err := json.Unmarshal(res, &got); err != nil {
				t.Fatal(err)
			}
			if ch, _ := got["channel"].(string); ch != tc.channel {
				t.Fatalf("channel = %v, want %q", got["channel"], tc.channel)
			}
			if ts, _ := got[tc.tsField].(string); ts != tc.ts {
				t.Fatalf("%s = %v, want %q", tc.tsField, got[tc.tsField], tc.ts)
			}
			if n := len(s.Calls(tc.method)); n != 1 {
				t.Fatalf("%d calls to %s, want exactly 1", n, tc.method)
			}
			warned := strings.Contains(logs.String(), `"level":"WARN"`)
			if warned != (tc.ts == "") {
				t.Fatalf("warning logged = %v, want %v; logs:\n%s", warned, tc.ts == "", logs.String())
			}
			if strings.Contains(logs.String(), botToken) {
				t.Fatalf("the token reached the log:\n%s", logs.String())
			}
		})
	}
}

// TestAnswerFailures: only ok and error decide a 200 answer's fate; a
// failure keeps its Slack error code however odd the rest is, and what
// cannot be read at all is a decode error.
func TestAnswerFailures(t *testing.T) {
	big := `{"ok":false,"error":"msg_too_long","echo":"` + strings.Repeat("x", maxBodyInError) + `"}`
	cases := []struct {
		name     string
		body     string
		category pluginkit.Category
		msg      string
		code     string // data.slack_error
		withBody bool   // data.body is Slack's answer
	}{
		{name: "ok false", body: `{"ok":false,"error":"channel_not_found"}`,
			category: CategorySlackError, msg: "slack api error: channel_not_found", code: "channel_not_found", withBody: true},
		{name: "ok false with odd extras", body: `{"ok":false,"error":"invalid_blocks","message":{"blocks":"x"},"response_metadata":{"messages":7}}`,
			category: CategorySlackError, msg: "slack api error: invalid_blocks", code: "invalid_blocks", withBody: true},
		{name: "ok false with a large body", body: big,
			category: CategorySlackError, msg: "slack api error: msg_too_long", code: "msg_too_long"},
		{name: "ok false without a code", body: `{"ok":false}`,
			category: CategoryDecode, msg: "neither ok:true nor an error code"},
		{name: "ok false with a code of another type", body: `{"ok":false,"error":{"code":1}}`,
			category: CategoryDecode, msg: "neither ok:true nor an error code"},
		{name: "no ok", body: `{"channel":"C1","ts":"1.1"}`,
			category: CategoryDecode, msg: "neither ok:true nor an error code"},
		{name: "ok not a boolean", body: `{"ok":"true","channel":"C1","ts":"1.1"}`,
			category: CategoryDecode, msg: `ok is "true", not a boolean`},
		{name: "null", body: `null`, category: CategoryDecode, msg: "not a JSON object"},
		{name: "array", body: `[{"ok":true}]`, category: CategoryDecode, msg: "slack decode: chat.postMessage"},
		{name: "trailing garbage", body: `{"ok":true} {"ok":false}`, category: CategoryDecode, msg: "slack decode: chat.postMessage"},
		{name: "truncated", body: `{"ok":true,"channel":"C1"`, category: CategoryDecode, msg: "slack decode: chat.postMessage"},
		{name: "too large", body: `{"ok":true,"pad":"` + strings.Repeat("x", maxResponseBytes) + `"}`,
			category: CategoryTransport, msg: "response larger than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			c, slept := client(s, botToken)
			s.FailNext("chat.postMessage", fakeslack.Failure{Body: tc.body})
			res, err := c.PostMessage(context.Background(), &PostMessageParams{Channel: "C1", Text: "x"})
			if res != nil {
				t.Fatalf("result %s on a failure", res)
			}
			pe := wantPluginError(t, err, pluginkit.CodeInternalError, tc.category, tc.msg)
			if got, _ := pe.Data["slack_error"].(string); got != tc.code {
				t.Fatalf("data.slack_error = %q, want %q", got, tc.code)
			}
			body, hasBody := pe.Data["body"].(json.RawMessage)
			if hasBody != tc.withBody || (tc.withBody && string(body) != tc.body) {
				t.Fatalf("data.body = %s (present %v), want present %v", body, hasBody, tc.withBody)
			}
			if n := len(s.Calls("chat.postMessage")); n != 1 || len(*slept) != 0 {
				t.Fatalf("%d calls, slept %v: only 429 is retried", n, *slept)
			}
		})
	}
}

// TestIdentityIgnoresOddFields: auth.test is read for three strings only.
func TestIdentityIgnoresOddFields(t *testing.T) {
	cases := []struct {
		name string
		body string
		want Identity
	}{
		{"odd extras", `{"ok":true,"team_id":"T1","user_id":"UBOT","bot_id":"BBOT","is_enterprise_install":"no","enterprise_id":{"x":1}}`,
			Identity{TeamID: "T1", UserID: "UBOT", BotID: "BBOT"}},
		{"user token without bot_id", `{"ok":true,"team_id":"T1","user_id":"U1"}`, Identity{TeamID: "T1", UserID: "U1"}},
		{"ids of another type", `{"ok":true,"team_id":1,"user_id":"U1","bot_id":null}`, Identity{UserID: "U1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			c, _ := client(s, botToken)
			s.FailNext("auth.test", fakeslack.Failure{Body: tc.body})
			id, err := c.Identity(context.Background())
			if err != nil || id != tc.want {
				t.Fatalf("Identity = %+v, %v; want %+v", id, err, tc.want)
			}
		})
	}
}

// TestRequestsAsSlackGoSends: the plugin's own Web API calls put on the
// wire what slack-go's methods did (path, content type, form, token), so
// Slack and the fake servers see no change.
func TestRequestsAsSlackGoSends(t *testing.T) {
	blocks := json.RawMessage(`[{"type":"section","text":{"type":"mrkdwn","text":"*done*"}},{"type":"divider"}]`)
	set, err := decodeBlocks(blocks)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		methods []string // Slack methods called, in order
		ours    func(ctx context.Context, c *Client) error
		theirs  func(ctx context.Context, api *slack.Client) error
	}{
		{name: "chat.postMessage", methods: []string{"chat.postMessage"},
			ours: func(ctx context.Context, c *Client) error {
				_, err := c.PostMessage(ctx, &PostMessageParams{Channel: "C1", Text: "a & b <c>", ThreadTS: "1.1", Blocks: blocks})
				return err
			},
			theirs: func(ctx context.Context, api *slack.Client) error {
				_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("a & b <c>", false),
					slack.MsgOptionTS("1.1"), slack.MsgOptionBlocks(set...))
				return err
			}},
		{name: "chat.postMessage text only", methods: []string{"chat.postMessage"},
			ours: func(ctx context.Context, c *Client) error {
				_, err := c.PostMessage(ctx, &PostMessageParams{Channel: "C1", Text: "hi"})
				return err
			},
			theirs: func(ctx context.Context, api *slack.Client) error {
				_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false))
				return err
			}},
		{name: "chat.postEphemeral", methods: []string{"chat.postEphemeral"},
			ours: func(ctx context.Context, c *Client) error {
				_, err := c.PostEphemeral(ctx, &PostEphemeralParams{Channel: "C1", User: "U1", Blocks: blocks})
				return err
			},
			theirs: func(ctx context.Context, api *slack.Client) error {
				_, err := api.PostEphemeralContext(ctx, "C1", "U1", slack.MsgOptionBlocks(set...))
				return err
			}},
		{name: "send_dm", methods: []string{"conversations.open", "chat.postMessage"},
			ours: func(ctx context.Context, c *Client) error {
				_, err := c.SendDM(ctx, &SendDMParams{UserID: "U7", Text: "hello"})
				return err
			},
			theirs: func(ctx context.Context, api *slack.Client) error {
				ch, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U7"}})
				if err != nil {
					return err
				}
				_, _, err = api.PostMessageContext(ctx, ch.ID, slack.MsgOptionText("hello", false))
				return err
			}},
		{name: "auth.test", methods: []string{"auth.test"},
			ours: func(ctx context.Context, c *Client) error {
				_, err := c.Identity(ctx)
				return err
			},
			theirs: func(ctx context.Context, api *slack.Client) error {
				_, err := api.AuthTestContext(ctx)
				return err
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mine, ref := newFake(t), newFake(t)
			c, _ := client(mine, botToken)
			if err := tc.ours(ctx, c); err != nil {
				t.Fatalf("ours: %v", err)
			}
			api := slack.New(botToken, slack.OptionAPIURL(ref.APIBase()+"/"))
			if err := tc.theirs(ctx, api); err != nil {
				t.Fatalf("slack-go: %v", err)
			}
			ours, theirs := onTheWire(mine.Calls("")), onTheWire(ref.Calls(""))
			if len(ours) != len(tc.methods) || len(theirs) != len(tc.methods) {
				t.Fatalf("calls: ours %+v, slack-go %+v", ours, theirs)
			}
			for i, m := range tc.methods {
				got, want := ours[i], theirs[i]
				if got.method != m || !reflect.DeepEqual(got, want) {
					t.Fatalf("request %d:\n ours    %+v\n slack-go %+v", i, got, want)
				}
			}
		})
	}
}

// request is what a recorded call put on the wire.
type request struct {
	method      string
	form        url.Values
	auth        string
	contentType string
}

func onTheWire(calls []fakeslack.Call) []request {
	out := make([]request, len(calls))
	for i, c := range calls {
		out[i] = request{method: c.Method, form: c.Form, auth: c.Auth, contentType: c.ContentType}
	}
	return out
}

// TestAPIURLForms: the base may come with or without its trailing slash.
func TestAPIURLForms(t *testing.T) {
	s := newFake(t)
	for _, base := range []string{s.APIBase() + "/", s.APIBase()} {
		c := New(Options{BotToken: botToken, APIURL: base})
		if _, err := c.PostMessage(context.Background(), &PostMessageParams{Channel: "C1", Text: "x"}); err != nil {
			t.Fatalf("base %q: %v", base, err)
		}
	}
	if n := len(s.Calls("chat.postMessage")); n != 2 {
		t.Fatalf("%d calls reached chat.postMessage, want 2", n)
	}
}
