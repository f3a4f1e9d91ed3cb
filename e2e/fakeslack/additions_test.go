package fakeslack

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// TestAcksInOrderWithRepeats: a redelivered envelope is acked again, and
// WaitAcks sees both acks where WaitAck sees only the first.
func TestAcksInOrderWithRepeats(t *testing.T) {
	s := New(t, Options{})
	sm := socketmode.New(client(s, s.Options().AppToken))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sm.RunContext(ctx) }()
	defer func() { cancel(); <-done }()
	if err := s.WaitConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}

	sends := []struct {
		envelope string
		retry    int
	}{{"e1", 0}, {"e1", 1}, {"e2", 0}}
	for _, snd := range sends {
		if err := s.Send(EventsAPI(snd.envelope, snd.retry, Callback("T1", "Ev"+snd.envelope, Mention("C1", "U1", "hi", "1.1")))); err != nil {
			t.Fatal(err)
		}
		ev := nextEvent(t, sm, socketmode.EventTypeEventsAPI)
		if err := sm.Ack(*ev.Request); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"e1", "e1", "e2"}
	got, err := s.WaitAcks(ctx, len(want))
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("WaitAcks = %v, %v; want %v", got, err, want)
	}
	if got := s.Acks(); !slices.Equal(got, want) {
		t.Fatalf("Acks = %v, want %v", got, want)
	}
	// The latencies keep one entry per envelope, as before.
	if n := len(s.AckLatencies()); n != 2 {
		t.Fatalf("%d ack latencies, want 2", n)
	}
}

// TestInjectedAnswers: a standing failure lasts until cleared and yields
// to the FailNext queue; a Body is sent verbatim, with its status.
func TestInjectedAnswers(t *testing.T) {
	const odd = `{"ok":true,"channel":"C1","ts":"1.1","message":{"blocks":"not an array"}}`
	type step struct {
		name   string
		before func(*Server)
		method string
		status int
		body   string // a fragment the answer must hold
	}
	steps := []step{
		{"standing failure", func(s *Server) { s.SetFailure("auth.test", Failure{Error: "token_revoked"}) },
			"auth.test", 200, `"error":"token_revoked"`},
		{"still failing", nil, "auth.test", 200, `"error":"token_revoked"`},
		{"the queue comes first", func(s *Server) { s.FailNext("auth.test", Failure{Status: 503}) },
			"auth.test", 503, "Slack is having trouble"},
		{"standing again after the queue", nil, "auth.test", 200, `"error":"token_revoked"`},
		{"other methods unaffected", nil, "conversations.open", 200, `"id":"D42"`},
		{"cleared", func(s *Server) { s.SetFailure("auth.test", Failure{}) }, "auth.test", 200, `"user_id":"U0BOT"`},
		{"verbatim body", func(s *Server) { s.FailNext("chat.postMessage", Failure{Body: odd}) },
			"chat.postMessage", 200, odd},
		{"verbatim body with a status", func(s *Server) { s.SetFailure("chat.postMessage", Failure{Status: 500, Body: `{"ok":false}`}) },
			"chat.postMessage", 500, `{"ok":false}`},
	}
	s := New(t, Options{})
	form := url.Values{"token": {s.Options().BotToken}, "users": {"U42"}, "channel": {"C1"}, "text": {"hi"}}
	for _, st := range steps {
		if st.before != nil {
			st.before(s)
		}
		resp, err := http.PostForm(s.APIBase()+"/"+st.method, form)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != st.status || !strings.Contains(string(b), st.body) {
			t.Fatalf("%s: %s answered %d %s; want %d with %s", st.name, st.method, resp.StatusCode, b, st.status, st.body)
		}
	}
	if n := len(s.Calls("auth.test")); n != 5 {
		t.Fatalf("%d auth.test calls recorded, want 5 (failures are calls too)", n)
	}
}

// TestEventRequestVerifiesWithSlackGo: the request carries what Slack
// sends, and slack-go's verifier accepts its signature.
func TestEventRequestVerifiesWithSlackGo(t *testing.T) {
	body := Callback("T1", "Ev1", Mention("C1", "U1", "hi", "1.1"))
	req, err := EventRequest("http://127.0.0.1:1/slack/events", "s3cret", time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("request %s with content type %q", req.Method, req.Header.Get("Content-Type"))
	}
	sv, err := slack.NewSecretsVerifier(req.Header, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	sent, _ := io.ReadAll(req.Body)
	sv.Write(sent)
	if err := sv.Ensure(); err != nil || string(sent) != string(body) {
		t.Fatalf("slack-go rejects the request (%v) or the body changed: %s", err, sent)
	}
}
