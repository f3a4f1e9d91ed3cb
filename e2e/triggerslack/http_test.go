package triggerslack

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

const signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func httpEnv(fake *fakeslack.Server, addr string) map[string]string {
	return map[string]string{
		"SLACK_MODE":           "http",
		"SLACK_SIGNING_SECRET": signingSecret,
		"SLACK_EVENTS_ADDR":    addr,
		"SLACK_EVENTS_PATH":    "/slack/events",
		"SLACK_BOT_TOKEN":      fake.Options().BotToken,
		"SLACK_API_BASE":       fake.APIBase(),
		"SLACK_TRIGGER_ID":     triggerID,
	}
}

// post sends body signed with secret at `at`, plus extra headers.
func post(t *testing.T, url, secret string, at time.Time, body []byte, extra map[string]string) (int, string, time.Duration) {
	t.Helper()
	req, err := fakeslack.EventRequest(url, secret, at, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), time.Since(start)
}

// TestEventsAPI drives http mode with real signed requests: only the
// valid ones are emitted, url_verification is answered, and Slack's retry
// of a delivered event is emitted once.
func TestEventsAPI(t *testing.T) {
	t.Parallel()
	ctx := e2etest.Ctx(t, time.Minute)
	fake := fakeslack.New(t, fakeslack.Options{})
	addr := freeAddr(t)
	h := spawn(t, ctx, "", httpEnv(fake, addr))
	watch(t, ctx, h)
	waitHealth(t, ctx, h, "healthy")
	url := "http://" + addr + "/slack/events"
	team := fake.Options().TeamID
	ts := fake.NextTS()
	valid := fakeslack.Callback(team, "EvHTTP1", fakeslack.Mention("C1", "U1", "<@U0BOT> ship it", ts))
	now := time.Now()

	cases := []struct {
		name    string
		secret  string
		at      time.Time
		body    []byte
		signed  []byte // body the signature covers, when it differs (tampering)
		headers map[string]string
		status  int
		reply   string
	}{
		{name: "wrong secret", secret: "not-the-secret", at: now, body: valid, status: 401},
		{name: "stale timestamp", secret: signingSecret, at: now.Add(-6 * time.Minute), body: valid, status: 401},
		{name: "tampered body", secret: signingSecret, at: now, signed: valid,
			body: bytes.Replace(valid, []byte("ship it"), []byte("rm -rf"), 1), status: 401},
		{name: "url_verification", secret: signingSecret, at: now,
			body:   []byte(`{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`),
			status: 200, reply: `{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}`},
		{name: "valid", secret: signingSecret, at: now, body: valid, status: 200},
		{name: "retry of the same event", secret: signingSecret, at: now.Add(3 * time.Second), body: valid,
			headers: map[string]string{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}, status: 200},
	}
	for _, tc := range cases {
		var status int
		var reply string
		var took time.Duration
		if tc.signed != nil {
			ts, sig := fakeslack.Sign(tc.secret, tc.at, tc.signed)
			status, reply, took = post(t, url, "", tc.at, tc.body, map[string]string{"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig})
		} else {
			status, reply, took = post(t, url, tc.secret, tc.at, tc.body, tc.headers)
		}
		if status != tc.status || (tc.reply != "" && reply != tc.reply) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, status, reply, tc.status, tc.reply)
		}
		if took > time.Second {
			t.Errorf("%s: answered after %v; Slack retries after 3 s", tc.name, took)
		}
	}
	waitEvents(t, ctx, h, 1)
	time.Sleep(300 * time.Millisecond) // a second event would have arrived by now
	got := events(t, h)
	if len(got) != 1 {
		t.Fatalf("events = %v, want exactly the valid one", got)
	}
	if got[0].EventID != "slack:"+team+"/C1/"+ts || got[0].Trigger != triggerID || got[0].Payload["text"] != "<@U0BOT> ship it" {
		t.Fatalf("event = %v", got[0])
	}
	if !strings.Contains(h.Stderr(), "events api request rejected") {
		t.Errorf("rejections are not logged")
	}
	if strings.Contains(h.Stderr(), signingSecret) {
		t.Fatal("the signing secret reached the log")
	}
}

// TestEventsAPIPortInUse: a listener that cannot bind fails the watch.
func TestEventsAPIPortInUse(t *testing.T) {
	t.Parallel()
	ctx := e2etest.Ctx(t, time.Minute)
	fake := fakeslack.New(t, fakeslack.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	h := spawn(t, ctx, "", httpEnv(fake, ln.Addr().String()))
	resp := e2etest.RequestContext(t, ctx, h, "trigger/watch", json.RawMessage(`{}`))
	if resp.Error == nil || resp.Error.Code != -32603 || resp.Error.Category() != "address_in_use" {
		t.Fatalf("watch on a bound port: %s", errorf(resp))
	}
	// The plugin keeps serving.
	if resp := e2etest.RequestContext(t, ctx, h, "trigger/schema", json.RawMessage(`{}`)); resp.Error != nil {
		t.Fatalf("after the failed watch: %s", errorf(resp))
	}
	rep, err := h.Shutdown(context.Background(), fakehost.LadderDaemon)
	if err != nil || !rep.ExitedByItself {
		t.Fatalf("shutdown: %+v %v", rep, err)
	}
}
