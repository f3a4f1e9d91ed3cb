package slackapi

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// botToken is the bot token the fake accepts and the clients send.
const botToken = "xoxb-1"

// newFake starts the project's fake Slack accepting botToken.
func newFake(t *testing.T) *fakeslack.Server {
	return fakeslack.New(t, fakeslack.Options{BotToken: botToken})
}

// client returns a Client with token on s, its sleeps recorded, not slept.
func client(s *fakeslack.Server, token string) (*Client, *[]time.Duration) {
	c := New(Options{BotToken: token, APIURL: s.APIBase()})
	var slept []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return ctx.Err() }
	return c, &slept
}

// lastCall is the latest recorded call of method.
func lastCall(t *testing.T, s *fakeslack.Server, method string) fakeslack.Call {
	t.Helper()
	calls := s.Calls(method)
	if len(calls) == 0 {
		t.Fatalf("no %s call; methods called: %v", method, s.Methods())
	}
	return calls[len(calls)-1]
}

func wantPluginError(t *testing.T, err error, code int, category pluginkit.Category, msg string) *pluginkit.Error {
	t.Helper()
	var pe *pluginkit.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *pluginkit.Error", err, err)
	}
	if pe.Code != code || pe.Category != category || !strings.Contains(pe.Message, msg) {
		t.Fatalf("error = %d %s %q, want %d %s containing %q", pe.Code, pe.Category, pe.Message, code, category, msg)
	}
	return pe
}

func TestPostMessage(t *testing.T) {
	s := newFake(t)
	c, _ := client(s, botToken)
	res, err := c.PostMessage(context.Background(), &PostMessageParams{
		Channel: "C1", Text: "done", ThreadTS: "1715701234.000100",
		Blocks: json.RawMessage(`[{"type":"section","text":{"type":"mrkdwn","text":"*done*"}}]`),
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := s.Calls("chat.postMessage")
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	if string(res) != calls[0].Answer {
		t.Fatalf("result = %s, want Slack's whole response %s", res, calls[0].Answer)
	}
	form := calls[0].Form
	if form.Get("channel") != "C1" || form.Get("text") != "done" || form.Get("thread_ts") != "1715701234.000100" ||
		!strings.Contains(form.Get("blocks"), `"*done*"`) {
		t.Fatalf("form = %v", form)
	}
	if form.Get("token") != botToken && calls[0].Auth != "Bearer "+botToken {
		t.Fatalf("bot token not sent: form %v auth %q", form, calls[0].Auth)
	}
}

func TestPostEphemeralAndSendDM(t *testing.T) {
	s := newFake(t)
	c, _ := client(s, botToken)
	res, err := c.PostEphemeral(context.Background(), &PostEphemeralParams{Channel: "C1", User: "U1", Text: "psst"})
	eph := lastCall(t, s, "chat.postEphemeral")
	if err != nil || string(res) != eph.Answer {
		t.Fatalf("PostEphemeral = %s, %v; Slack answered %s", res, err, eph.Answer)
	}
	if form := eph.Form; form.Get("user") != "U1" || form.Get("channel") != "C1" {
		t.Fatalf("form = %v", form)
	}

	res, err = c.SendDM(context.Background(), &SendDMParams{UserID: "U7", Text: "hello"})
	post := lastCall(t, s, "chat.postMessage")
	if err != nil || string(res) != post.Answer {
		t.Fatalf("SendDM = %s, %v; chat.postMessage answered %s", res, err, post.Answer)
	}
	if form := lastCall(t, s, "conversations.open").Form; form.Get("users") != "U7" {
		t.Fatalf("conversations.open form = %v", form)
	}
	if form := post.Form; form.Get("channel") != fakeslack.DMChannel("U7") || form.Get("text") != "hello" {
		t.Fatalf("chat.postMessage form = %v, want the channel conversations.open returned", form)
	}
}

func TestOutboundErrors(t *testing.T) {
	cases := []struct {
		name     string
		inject   []fakeslack.Failure // chat.postMessage's answers, before the normal one
		category pluginkit.Category
		msg      string
		calls    int
		slept    []time.Duration
		// checkData checks the error's data against the last answer.
		checkData func(t *testing.T, d map[string]any, answer string)
	}{
		{name: "ok false", inject: []fakeslack.Failure{{Error: "channel_not_found"}},
			category: CategorySlackError, msg: "slack api error: channel_not_found", calls: 1,
			checkData: func(t *testing.T, d map[string]any, answer string) {
				if d["slack_error"] != "channel_not_found" || string(d["body"].(json.RawMessage)) != answer {
					t.Fatalf("data = %v, want Slack's answer %s", d, answer)
				}
			}},
		{name: "429 then ok is retried once", inject: []fakeslack.Failure{{Status: 429, RetryAfter: "2"}},
			calls: 2, slept: []time.Duration{2 * time.Second}},
		{name: "429 twice", inject: []fakeslack.Failure{{Status: 429, RetryAfter: "1"}, {Status: 429, RetryAfter: "1"}},
			category: CategoryHTTP, msg: "slack http 429", calls: 2, slept: []time.Duration{time.Second},
			checkData: func(t *testing.T, d map[string]any, _ string) {
				if d["status"] != 429 || d["retry_after_ms"] != int64(1000) {
					t.Fatalf("data = %v", d)
				}
			}},
		{name: "429 with a long Retry-After is not retried", inject: []fakeslack.Failure{{Status: 429, RetryAfter: "30"}},
			category: CategoryHTTP, msg: "slack http 429", calls: 1,
			checkData: func(t *testing.T, d map[string]any, _ string) {
				if d["retry_after_ms"] != int64(30000) {
					t.Fatalf("data = %v", d)
				}
			}},
		{name: "429 without Retry-After", inject: []fakeslack.Failure{{Status: 429}, {Status: 429}},
			category: CategoryHTTP, msg: "slack http 429", calls: 2, slept: []time.Duration{time.Second}},
		{name: "503", inject: []fakeslack.Failure{{Status: 503}},
			category: CategoryHTTP, msg: "slack http 503", calls: 1,
			checkData: func(t *testing.T, d map[string]any, answer string) {
				if d["status"] != 503 || !strings.HasPrefix(answer, "<html>") || d["body"] != answer {
					t.Fatalf("data = %v, want Slack's HTML page %q as text", d, answer)
				}
			}},
		{name: "not json", inject: []fakeslack.Failure{{Body: `{"ok":tru`}},
			category: CategoryDecode, msg: "slack decode: chat.postMessage", calls: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			c, slept := client(s, botToken)
			s.FailNext("chat.postMessage", tc.inject...)
			res, err := c.PostMessage(context.Background(), &PostMessageParams{Channel: "C1", Text: "x"})
			if n := len(s.Calls("chat.postMessage")); n != tc.calls {
				t.Fatalf("%d calls, want %d", n, tc.calls)
			}
			if !slices.Equal(*slept, tc.slept) {
				t.Fatalf("slept %v, want %v", *slept, tc.slept)
			}
			last := lastCall(t, s, "chat.postMessage")
			if tc.category == "" {
				if err != nil || string(res) != last.Answer {
					t.Fatalf("got %s, %v; Slack answered %s", res, err, last.Answer)
				}
				return
			}
			pe := wantPluginError(t, err, pluginkit.CodeInternalError, tc.category, tc.msg)
			if tc.checkData != nil {
				tc.checkData(t, pe.Data, last.Answer)
			}
		})
	}
}

func TestTransportError(t *testing.T) {
	s := newFake(t)
	c, _ := client(s, botToken)
	s.Close()
	_, err := c.PostMessage(context.Background(), &PostMessageParams{Channel: "C1", Text: "x"})
	wantPluginError(t, err, pluginkit.CodeInternalError, CategoryTransport, "slack transport: chat.postMessage")
}

func TestCancelledWhileWaitingForRetry(t *testing.T) {
	s := newFake(t)
	c, _ := client(s, botToken)
	c.sleep = sleepCtx
	s.FailNext("chat.postMessage", fakeslack.Failure{Status: 429, RetryAfter: "3"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.PostMessage(ctx, &PostMessageParams{Channel: "C1", Text: "x"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("err = %v after %v; want the caller's deadline, promptly", err, time.Since(start))
	}
}

func TestSendDMErrors(t *testing.T) {
	s := newFake(t)
	c, _ := client(s, botToken)
	// The fake knows no user whose id starts with U404, as Slack would not.
	_, err := c.SendDM(context.Background(), &SendDMParams{UserID: "U404", Text: "x"})
	wantPluginError(t, err, pluginkit.CodeInternalError, CategorySlackError, "slack api error: user_not_found")

	s.FailNext("conversations.open", fakeslack.Failure{Body: `{"ok":true}`})
	_, err = c.SendDM(context.Background(), &SendDMParams{UserID: "U1", Text: "x"})
	wantPluginError(t, err, pluginkit.CodeInternalError, CategoryDecode, "no channel.id")
	if n := len(s.Calls("chat.postMessage")); n != 0 {
		t.Fatalf("chat.postMessage called %d times after conversations.open failed", n)
	}
}

func TestMissingBotToken(t *testing.T) {
	s := newFake(t)
	c, _ := client(s, "")
	for name, call := range map[string]func() error{
		"post": func() error {
			_, err := c.PostMessage(context.Background(), &PostMessageParams{Channel: "C", Text: "x"})
			return err
		},
		"ephemeral": func() error {
			_, err := c.PostEphemeral(context.Background(), &PostEphemeralParams{Channel: "C", User: "U", Text: "x"})
			return err
		},
		"dm": func() error {
			_, err := c.SendDM(context.Background(), &SendDMParams{UserID: "U", Text: "x"})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			wantPluginError(t, call(), pluginkit.CodeInternalError, CategoryMissingToken, "SLACK_BOT_TOKEN unset")
		})
	}
	if calls := s.Calls(""); len(calls) != 0 {
		t.Fatalf("requests were sent without a token: %+v", calls)
	}
}

func TestValidate(t *testing.T) {
	blocks := json.RawMessage(`[{"type":"divider"}]`)
	cases := []struct {
		name string
		v    interface{ Validate() error }
		msg  string // "" = valid
	}{
		{"post nil", (*PostMessageParams)(nil), "missing params"},
		{"post ok text", &PostMessageParams{Channel: "C", Text: "x"}, ""},
		{"post ok blocks", &PostMessageParams{Channel: "C", Blocks: blocks}, ""},
		{"post blank channel", &PostMessageParams{Channel: "  ", Text: "x"}, "channel must not be empty"},
		{"post no content", &PostMessageParams{Channel: "C", Text: " "}, "text or blocks must not be empty"},
		{"post empty blocks", &PostMessageParams{Channel: "C", Blocks: json.RawMessage(`[]`)}, "text or blocks must not be empty"},
		{"post blocks not array", &PostMessageParams{Channel: "C", Blocks: json.RawMessage(`{"type":"divider"}`)}, `field "blocks": expected array`},
		{"post blocks bad", &PostMessageParams{Channel: "C", Blocks: json.RawMessage(`[1]`)}, `field "blocks"`},
		{"ephemeral nil", (*PostEphemeralParams)(nil), "missing params"},
		{"ephemeral no user", &PostEphemeralParams{Channel: "C", Text: "x"}, "user must not be empty"},
		{"ephemeral no channel", &PostEphemeralParams{User: "U", Text: "x"}, "channel must not be empty"},
		{"ephemeral ok", &PostEphemeralParams{Channel: "C", User: "U", Text: "x"}, ""},
		{"dm nil", (*SendDMParams)(nil), "missing params"},
		{"dm no user", &SendDMParams{Text: "x"}, "user_id must not be empty"},
		{"dm no content", &SendDMParams{UserID: "U"}, "text or blocks must not be empty"},
		{"dm ok", &SendDMParams{UserID: "U", Blocks: blocks}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.v.Validate()
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			wantPluginError(t, err, pluginkit.CodeInvalidParams, pluginkit.CategoryInvalidRequest, tc.msg)
		})
	}
}

func TestIdentityAndAuthError(t *testing.T) {
	s := fakeslack.New(t, fakeslack.Options{BotToken: botToken, TeamID: "T1", BotUserID: "UBOT", BotID: "BBOT"})
	c, _ := client(s, botToken)
	id, err := c.Identity(context.Background())
	if err != nil || id != (Identity{TeamID: "T1", UserID: "UBOT", BotID: "BBOT"}) {
		t.Fatalf("Identity = %+v, %v", id, err)
	}
	wrong, _ := client(s, "xoxb-wrong")
	_, err = wrong.Identity(context.Background())
	if code, ok := AuthError(err); !ok || code != "invalid_auth" {
		t.Fatalf("AuthError(%v) = %q %v", err, code, ok)
	}
	s.FailNext("auth.test", fakeslack.Failure{Error: "ratelimited_but_not_auth"})
	_, err = c.Identity(context.Background())
	if _, ok := AuthError(err); ok {
		t.Fatalf("AuthError(%v) classified a non-auth error as auth", err)
	}
}
