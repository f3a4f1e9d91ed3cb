package fakeslack

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestCallsRecordRequestAndAnswer: each call is recorded with its form,
// Authorization and Content-Type, and with the status and body the client
// got, normal and injected answers alike, as soon as the client has them.
func TestCallsRecordRequestAndAnswer(t *testing.T) {
	s := New(t, Options{})
	bot := s.Options().BotToken
	steps := []struct {
		name        string
		inject      []Failure
		method      string
		auth        string // Authorization header ("" = token in the form)
		contentType string
		status      int
		answer      string // a fragment of the answer
	}{
		{name: "token in the form", method: "auth.test", contentType: "application/x-www-form-urlencoded",
			status: 200, answer: `"user_id":"U0BOT"`},
		{name: "bearer token", method: "chat.postMessage", auth: "Bearer " + bot,
			contentType: "application/x-www-form-urlencoded; charset=utf-8", status: 200, answer: `"text":"hi"`},
		{name: "wrong token", method: "conversations.open", auth: "Bearer xoxb-wrong",
			contentType: "application/x-www-form-urlencoded", status: 200, answer: `"error":"invalid_auth"`},
		{name: "rate limited", inject: []Failure{{Status: 429, RetryAfter: "3"}}, method: "chat.postEphemeral",
			contentType: "application/x-www-form-urlencoded", status: 429, answer: `"error":"ratelimited"`},
		{name: "5xx", inject: []Failure{{Status: 502}}, method: "chat.postMessage",
			contentType: "application/x-www-form-urlencoded", status: 502, answer: "<html>"},
		{name: "verbatim body", inject: []Failure{{Status: 201, Body: `{"ok":tru`}}, method: "auth.test",
			contentType: "text/plain", status: 201, answer: `{"ok":tru`},
	}
	for _, st := range steps {
		s.FailNext(st.method, st.inject...)
		form := url.Values{"channel": {"C1"}, "user": {"U1"}, "users": {"U1"}, "text": {"hi"}}
		if st.auth == "" {
			form.Set("token", bot)
		}
		req, err := http.NewRequest(http.MethodPost, s.APIBase()+"/"+st.method, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", st.contentType)
		if st.auth != "" {
			req.Header.Set("Authorization", st.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != st.status || !strings.Contains(string(b), st.answer) {
			t.Fatalf("%s: answered %d %s; want %d with %s", st.name, resp.StatusCode, b, st.status, st.answer)
		}
		calls := s.Calls(st.method)
		c := calls[len(calls)-1]
		if c.Method != st.method || c.Auth != st.auth || c.ContentType != st.contentType ||
			c.Form.Get("text") != "hi" || c.Form.Get("token") != form.Get("token") {
			t.Fatalf("%s: recorded request %s auth %q content type %q form %v", st.name, c.Method, c.Auth, c.ContentType, c.Form)
		}
		if c.Status != resp.StatusCode || c.Answer != string(b) {
			t.Fatalf("%s: recorded answer %d %q; the client got %d %q", st.name, c.Status, c.Answer, resp.StatusCode, b)
		}
	}
	if n := len(s.Calls("")); n != len(steps) {
		t.Fatalf("%d calls recorded, want %d", n, len(steps))
	}
}
