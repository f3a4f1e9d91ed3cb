package fakeslack

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// These tests hold the fake to slack-go, the client the plugin uses: if a
// real client cannot talk to it, the plugin's e2e results mean nothing.

func client(s *Server, appToken string) *slack.Client {
	return slack.New(s.Options().BotToken, slack.OptionAppLevelToken(appToken), slack.OptionAPIURL(s.APIBase()+"/"))
}

func nextEvent(t *testing.T, c *socketmode.Client, want socketmode.EventType) socketmode.Event {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case e := <-c.Events:
			if e.Type == want {
				return e
			}
		case <-timeout:
			t.Fatalf("no %s event", want)
		}
	}
}

func TestSocketModeWithSlackGo(t *testing.T) {
	s := New(t, Options{PingInterval: 100 * time.Millisecond})
	sm := socketmode.New(client(s, s.Options().AppToken), socketmode.OptionPingInterval(time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sm.RunContext(ctx) }()
	defer func() { cancel(); <-done }()

	nextEvent(t, sm, socketmode.EventTypeConnected)
	if err := s.WaitConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(EventsAPI("e1", 1, Callback("T1", "Ev1", Mention("C1", "U1", "hi", "1.000001")))); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, sm, socketmode.EventTypeEventsAPI)
	if ev.Request.EnvelopeID != "e1" || ev.Request.RetryAttempt != 1 || ev.Request.RetryReason != "timeout" {
		t.Fatalf("request = %+v", ev.Request)
	}
	if err := sm.Ack(*ev.Request); err != nil {
		t.Fatal(err)
	}
	if lat, err := s.WaitAck(ctx, "e1"); err != nil || lat <= 0 {
		t.Fatalf("ack: %v %v", lat, err)
	}
	// Slack's pings keep slack-go's 1 s watchdog quiet.
	time.Sleep(1500 * time.Millisecond)
	if s.Connections() != 1 {
		t.Fatalf("the connection was recycled (%d); pings are not reaching the client", s.Connections())
	}
	if err := s.Disconnect("refresh_requested"); err != nil {
		t.Fatal(err)
	}
	nextEvent(t, sm, socketmode.EventTypeConnected)
	// The client can report the new connection before the server has
	// counted it: wait for the count rather than race it.
	if err := s.WaitConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if s.Connections() != 2 || s.Opens() != 2 {
		t.Fatalf("after disconnect: %d connections, %d opens", s.Connections(), s.Opens())
	}
}

func TestConnectionsOpenAuth(t *testing.T) {
	s := New(t, Options{})
	cases := []struct{ token, forced, want string }{
		{"xapp-wrong", "", "invalid_auth"},
		{s.Options().BotToken, "", "not_allowed_token_type"},
		{s.Options().AppToken, "account_inactive", "account_inactive"},
	}
	for _, tc := range cases {
		s.SetOpenError(tc.forced)
		_, _, err := client(s, tc.token).StartSocketModeContext(context.Background())
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) || se.Err != tc.want {
			t.Errorf("token %q forced %q: %v, want %s", tc.token, tc.forced, err, tc.want)
		}
	}
	// slack-go gives up on a fatal auth error instead of retrying.
	s.SetOpenError("invalid_auth")
	err := socketmode.New(client(s, s.Options().AppToken)).RunContext(context.Background())
	if err == nil || err.Error() != "invalid_auth" {
		t.Fatalf("RunContext = %v", err)
	}
}

func TestWebAPIWithSlackGo(t *testing.T) {
	s := New(t, Options{})
	api := client(s, s.Options().AppToken)
	ctx := context.Background()
	id, err := api.AuthTestContext(ctx)
	if err != nil || id.UserID != "U0BOT" || id.BotID != "B0BOT" || id.TeamID != "T0FAKE" {
		t.Fatalf("auth.test = %+v, %v", id, err)
	}
	ch, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hello", false))
	if err != nil || ch != "C1" || ts == "" {
		t.Fatalf("postMessage = %s %s %v", ch, ts, err)
	}
	if c := s.Calls("chat.postMessage"); len(c) != 1 || c[0].Form.Get("text") != "hello" {
		t.Fatalf("calls = %+v", c)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1"); err == nil || err.Error() != "no_text" {
		t.Fatalf("empty message: %v", err)
	}
	s.FailNext("chat.postMessage", Failure{Status: 429, RetryAfter: "7"}, Failure{Status: 503})
	_, _, err = api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Fatalf("429: %v", err)
	}
	_, _, err = api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false))
	var sc slack.StatusCodeError
	if !errors.As(err, &sc) || sc.Code != http.StatusServiceUnavailable {
		t.Fatalf("503: %v", err)
	}
	dm, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{"U42"}})
	if err != nil || dm.ID != "D42" {
		t.Fatalf("conversations.open = %+v %v", dm, err)
	}
	bad := slack.New("xoxb-wrong", slack.OptionAPIURL(s.APIBase()+"/"))
	if _, err := bad.AuthTestContext(ctx); err == nil || err.Error() != "invalid_auth" {
		t.Fatalf("wrong token: %v", err)
	}
}

func TestSignVerifiesWithSlackGo(t *testing.T) {
	body := []byte(`{"type":"event_callback"}`)
	ts, sig := Sign("s3cret", time.Now(), body)
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", sig)
	sv, err := slack.NewSecretsVerifier(h, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	sv.Write(body)
	if err := sv.Ensure(); err != nil {
		t.Fatalf("slack-go rejects the fake's signature: %v", err)
	}
}
