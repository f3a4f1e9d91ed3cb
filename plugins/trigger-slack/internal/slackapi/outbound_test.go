package slackapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack/slacktest"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// fake is a slacktest server whose Web API methods are scripted per test:
// each call pops the next reply for its method (the last one repeats).
type fake struct {
	srv *slacktest.Server

	mu      sync.Mutex
	replies map[string][]reply
	calls   []call
}

type reply struct {
	status     int
	retryAfter string
	body       string
}

type call struct {
	method      string
	form        url.Values
	auth        string
	contentType string
}

func newFake(t *testing.T) *fake {
	f := &fake{replies: map[string][]reply{}}
	bind := func(c slacktest.Customize) {
		for _, m := range []string{"chat.postMessage", "chat.postEphemeral", "conversations.open", "auth.test"} {
			c.Handle("/"+m, f.handler(m))
		}
	}
	f.srv = slacktest.NewTestServer(bind)
	f.srv.Start()
	t.Cleanup(f.srv.Stop)
	return f
}

func (f *fake) script(method string, rs ...reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replies[method] = rs
}

func (f *fake) handler(method string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		f.mu.Lock()
		f.calls = append(f.calls, call{method: method, form: form, auth: r.Header.Get("Authorization"),
			contentType: r.Header.Get("Content-Type")})
		rs := f.replies[method]
		rep := reply{status: 200, body: `{"ok":true}`}
		if len(rs) > 0 {
			rep = rs[0]
			if len(rs) > 1 {
				f.replies[method] = rs[1:]
			}
		}
		f.mu.Unlock()
		if rep.retryAfter != "" {
			w.Header().Set("Retry-After", rep.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
	}
}

func (f *fake) callsTo(method string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.method == method {
			out = append(out, c)
		}
	}
	return out
}

// client returns a Client on the fake with sleeps recorded, not slept.
func (f *fake) client(botToken string) (*Client, *[]time.Duration) {
	c := New(Options{BotToken: botToken, APIURL: f.srv.GetAPIURL()})
	var slept []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return ctx.Err() }
	return c, &slept
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

const postOK = `{"ok":true,"channel":"C1","ts":"1715701400.000100","message":{"type":"message","text":"done","bot_id":"B1","ts":"1715701400.000100"}}`

func TestPostMessage(t *testing.T) {
	f := newFake(t)
	c, _ := f.client("xoxb-1")
	f.script("chat.postMessage", reply{status: 200, body: postOK})
	res, err := c.PostMessage(context.Background(), &PostMessageParams{
		Channel: "C1", Text: "done", ThreadTS: "1715701234.000100",
		Blocks: json.RawMessage(`[{"type":"section","text":{"type":"mrkdwn","text":"*done*"}}]`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(res) != postOK {
		t.Fatalf("result = %s, want Slack's whole response", res)
	}
	calls := f.callsTo("chat.postMessage")
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	form := calls[0].form
	if form.Get("channel") != "C1" || form.Get("text") != "done" || form.Get("thread_ts") != "1715701234.000100" ||
		!strings.Contains(form.Get("blocks"), `"*done*"`) {
		t.Fatalf("form = %v", form)
	}
	if form.Get("token") != "xoxb-1" && calls[0].auth != "Bearer xoxb-1" {
		t.Fatalf("bot token not sent: form %v auth %q", form, calls[0].auth)
	}
}

func TestPostEphemeralAndSendDM(t *testing.T) {
	f := newFake(t)
	c, _ := f.client("xoxb-1")
	f.script("chat.postEphemeral", reply{status: 200, body: `{"ok":true,"message_ts":"1.5"}`})
	res, err := c.PostEphemeral(context.Background(), &PostEphemeralParams{Channel: "C1", User: "U1", Text: "psst"})
	if err != nil || string(res) != `{"ok":true,"message_ts":"1.5"}` {
		t.Fatalf("PostEphemeral = %s, %v", res, err)
	}
	if form := f.callsTo("chat.postEphemeral")[0].form; form.Get("user") != "U1" || form.Get("channel") != "C1" {
		t.Fatalf("form = %v", form)
	}

	f.script("conversations.open", reply{status: 200, body: `{"ok":true,"channel":{"id":"D42"}}`})
	f.script("chat.postMessage", reply{status: 200, body: postOK})
	res, err = c.SendDM(context.Background(), &SendDMParams{UserID: "U7", Text: "hello"})
	if err != nil || string(res) != postOK {
		t.Fatalf("SendDM = %s, %v", res, err)
	}
	if form := f.callsTo("conversations.open")[0].form; form.Get("users") != "U7" {
		t.Fatalf("conversations.open form = %v", form)
	}
	if form := f.callsTo("chat.postMessage")[0].form; form.Get("channel") != "D42" || form.Get("text") != "hello" {
		t.Fatalf("chat.postMessage form = %v", form)
	}
}

func TestOutboundErrors(t *testing.T) {
	cases := []struct {
		name      string
		replies   []reply
		category  pluginkit.Category
		msg       string
		calls     int
		slept     []time.Duration
		checkData func(t *testing.T, d map[string]any)
	}{
		{name: "ok false", replies: []reply{{200, "", `{"ok":false,"error":"channel_not_found"}`}},
			category: CategorySlackError, msg: "slack api error: channel_not_found", calls: 1,
			checkData: func(t *testing.T, d map[string]any) {
				if d["slack_error"] != "channel_not_found" || string(d["body"].(json.RawMessage)) != `{"ok":false,"error":"channel_not_found"}` {
					t.Fatalf("data = %v", d)
				}
			}},
		{name: "429 then ok is retried once", replies: []reply{{429, "2", `{"ok":false,"error":"ratelimited"}`}, {200, "", postOK}},
			calls: 2, slept: []time.Duration{2 * time.Second}},
		{name: "429 twice", replies: []reply{{429, "1", ``}},
			category: CategoryHTTP, msg: "slack http 429", calls: 2, slept: []time.Duration{time.Second},
			checkData: func(t *testing.T, d map[string]any) {
				if d["status"] != 429 || d["retry_after_ms"] != int64(1000) {
					t.Fatalf("data = %v", d)
				}
			}},
		{name: "429 with a long Retry-After is not retried", replies: []reply{{429, "30", ``}},
			category: CategoryHTTP, msg: "slack http 429", calls: 1,
			checkData: func(t *testing.T, d map[string]any) {
				if d["retry_after_ms"] != int64(30000) {
					t.Fatalf("data = %v", d)
				}
			}},
		{name: "429 without Retry-After", replies: []reply{{429, "", `slow down`}},
			category: CategoryHTTP, msg: "slack http 429", calls: 2, slept: []time.Duration{time.Second}},
		{name: "503", replies: []reply{{503, "", `<html>upstream down</html>`}},
			category: CategoryHTTP, msg: "slack http 503", calls: 1,
			checkData: func(t *testing.T, d map[string]any) {
				if d["status"] != 503 || d["body"] != "<html>upstream down</html>" {
					t.Fatalf("data = %v", d)
				}
			}},
		{name: "not json", replies: []reply{{200, "", `{"ok":tru`}},
			category: CategoryDecode, msg: "slack decode: chat.postMessage", calls: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			c, slept := f.client("xoxb-1")
			f.script("chat.postMessage", tc.replies...)
			res, err := c.PostMessage(context.Background(), &PostMessageParams{Channel: "C1", Text: "x"})
			if n := len(f.callsTo("chat.postMessage")); n != tc.calls {
				t.Fatalf("%d calls, want %d", n, tc.calls)
			}
			if !equalDurations(*slept, tc.slept) {
				t.Fatalf("slept %v, want %v", *slept, tc.slept)
			}
			if tc.category == "" {
				if err != nil || string(res) != postOK {
					t.Fatalf("got %s, %v", res, err)
				}
				return
			}
			pe := wantPluginError(t, err, pluginkit.CodeInternalError, tc.category, tc.msg)
			if tc.checkData != nil {
				tc.checkData(t, pe.Data)
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTransportError(t *testing.T) {
	f := newFake(t)
	c, _ := f.client("xoxb-1")
	f.srv.Stop()
	_, err := c.PostMessage(context.Background(), &PostMessageParams{Channel: "C1", Text: "x"})
	wantPluginError(t, err, pluginkit.CodeInternalError, CategoryTransport, "slack transport: chat.postMessage")
}

func TestCancelledWhileWaitingForRetry(t *testing.T) {
	f := newFake(t)
	c, _ := f.client("xoxb-1")
	c.sleep = sleepCtx
	f.script("chat.postMessage", reply{429, "3", ""})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.PostMessage(ctx, &PostMessageParams{Channel: "C1", Text: "x"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("err = %v after %v; want the caller's deadline, promptly", err, time.Since(start))
	}
}

func TestSendDMErrors(t *testing.T) {
	f := newFake(t)
	c, _ := f.client("xoxb-1")
	f.script("conversations.open", reply{200, "", `{"ok":false,"error":"user_not_found"}`})
	_, err := c.SendDM(context.Background(), &SendDMParams{UserID: "U404", Text: "x"})
	wantPluginError(t, err, pluginkit.CodeInternalError, CategorySlackError, "slack api error: user_not_found")

	f.script("conversations.open", reply{200, "", `{"ok":true}`})
	_, err = c.SendDM(context.Background(), &SendDMParams{UserID: "U1", Text: "x"})
	wantPluginError(t, err, pluginkit.CodeInternalError, CategoryDecode, "no channel.id")
	if n := len(f.callsTo("chat.postMessage")); n != 0 {
		t.Fatalf("chat.postMessage called %d times after conversations.open failed", n)
	}
}

func TestMissingBotToken(t *testing.T) {
	f := newFake(t)
	c, _ := f.client("")
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
	if len(f.calls) != 0 {
		t.Fatalf("requests were sent without a token: %v", f.calls)
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
	f := newFake(t)
	c, _ := f.client("xoxb-1")
	f.script("auth.test", reply{200, "", `{"ok":true,"team_id":"T1","user_id":"UBOT","bot_id":"BBOT","user":"animus"}`})
	id, err := c.Identity(context.Background())
	if err != nil || id != (Identity{TeamID: "T1", UserID: "UBOT", BotID: "BBOT"}) {
		t.Fatalf("Identity = %+v, %v", id, err)
	}
	f.script("auth.test", reply{200, "", `{"ok":false,"error":"invalid_auth"}`})
	_, err = c.Identity(context.Background())
	if code, ok := AuthError(err); !ok || code != "invalid_auth" {
		t.Fatalf("AuthError(%v) = %q %v", err, code, ok)
	}
	f.script("auth.test", reply{200, "", `{"ok":false,"error":"ratelimited_but_not_auth"}`})
	_, err = c.Identity(context.Background())
	if _, ok := AuthError(err); ok {
		t.Fatalf("AuthError(%v) classified a non-auth error as auth", err)
	}
}
