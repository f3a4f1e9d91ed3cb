package trigger

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
)

// signedPost sends body to url as Slack's Events API does, signed with
// secret at `at`, and returns the status.
func signedPost(t *testing.T, url, secret string, body []byte, at time.Time) int {
	t.Helper()
	req, err := fakeslack.EventRequest(url, secret, at, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestEventsAPIStream: in http mode trigger/watch listens on the
// configured address; signed event_callbacks become events, anything else
// is refused and emits nothing.
func TestEventsAPIStream(t *testing.T) {
	fake := newFakeSlack(t)
	h := startHost(t, socketEnv(fake, map[string]string{
		"SLACK_MODE": "http", "SLACK_APP_TOKEN": "", "SLACK_SIGNING_SECRET": "s3cret",
		"SLACK_EVENTS_ADDR": "127.0.0.1:0", "SLACK_EVENTS_PATH": "/hooks/slack",
	}), t.TempDir())
	h.waitHealth("healthy") // configured, not watching yet
	if res, e := h.call("trigger/watch", map[string]any{}); e != nil || string(res) != `{"watching":true}` {
		t.Fatalf("trigger/watch = %s, %+v", res, e)
	}
	var listening struct {
		Addr string `json:"addr"`
	}
	if err := json.Unmarshal([]byte(h.waitLog("events api listening")), &listening); err != nil || listening.Addr == "" {
		t.Fatalf("listening log: %v", err)
	}
	h.waitHealth("healthy")
	url := "http://" + listening.Addr + "/hooks/slack"

	cases := []struct {
		name   string
		secret string
		at     time.Time
		body   []byte
		status int
		event  string // the event_id emitted ("" = none)
	}{
		{"wrong secret", "other", time.Now(), mention("Ev0", "C1", "0.1", "U1"), http.StatusUnauthorized, ""},
		{"stale timestamp", "s3cret", time.Now().Add(-10 * time.Minute), mention("Ev0", "C1", "0.2", "U1"), http.StatusUnauthorized, ""},
		{"mention", "s3cret", time.Now(), mention("Ev1", "C1", "1.1", "U1"), http.StatusOK, "slack:T1/C1/1.1"},
		{"same event again", "s3cret", time.Now(), mention("Ev1", "C1", "1.1", "U1"), http.StatusOK, ""},
		{"dm", "s3cret", time.Now(), dm("Ev2", "D1", "2.2", "U1"), http.StatusOK, "slack:T1/D1/2.2"},
	}
	var want []string
	for _, tc := range cases {
		if got := signedPost(t, url, tc.secret, tc.body, tc.at); got != tc.status {
			t.Fatalf("%s: status %d, want %d", tc.name, got, tc.status)
		}
		if tc.event != "" {
			want = append(want, tc.event)
		}
	}
	// Events leave in delivery order; a refused or repeated request emits
	// nothing, so the next events are exactly the wanted ones.
	for _, id := range want {
		if got := h.nextEvent(); got.EventID != id {
			t.Fatalf("event %s, want %s", got.EventID, id)
		}
	}
	h.waitLog("events api request rejected")
	h.waitLog("duplicate slack event suppressed", "slack:T1/C1/1.1")
	h.stop()
	if n := h.svc.Stats().Emitted.Load(); n != int64(len(want)) {
		t.Fatalf("emitted %d, want %d", n, len(want))
	}
	if strings.Contains(h.kit.PluginLog(), "s3cret") || strings.Contains(h.kit.PluginLog(), "xoxb-test") {
		t.Fatal("a secret reached the log")
	}
}
