package conformance

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// The streaming loops and the classifier decide verdicts from details the
// fixtures never exercise (frame order, id types, keyword spelling), so
// they are pinned here directly against the testkit rules they reproduce.

func TestConfigMissing(t *testing.T) {
	for text, want := range map[string]bool{
		"subject/list returned error: LINEAR_TEAM_ID must be set (code -32602)": true,
		"backend unavailable: SLACK_APP_TOKEN UNSET (code -32603)":              true,
		"invalid API Token":              true,
		"OAuth refused":                  true, // "auth" is a substring match, as upstream
		"database corrupt":               false,
		"no ack and no events within 3s": false,
	} {
		if got := configMissing(text); got != want {
			t.Errorf("configMissing(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestChronoRFC3339(t *testing.T) {
	base := time.Date(2026, 5, 17, 18, 20, 34, 0, time.UTC)
	for ns, want := range map[int]string{
		0:           "2026-05-17T18:20:34Z",
		120_000_000: "2026-05-17T18:20:34.120Z",
		123_456_000: "2026-05-17T18:20:34.123456Z",
		123_456_789: "2026-05-17T18:20:34.123456789Z",
	} {
		if got := chronoRFC3339(base.Add(time.Duration(ns))); got != want {
			t.Errorf("%d ns: %s, want %s", ns, got, want)
		}
	}
}

func TestReplayTail(t *testing.T) {
	set, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	entry := func(id string) string {
		return `{"id":"` + id + `","ts":"2026-05-17T18:20:34Z","level":"info","source":"plugin","target":"t","message":"m"}`
	}
	event := func(ms int, params string) fakehost.Notification {
		return fakehost.Notification{Method: "log_storage/event", Params: json.RawMessage(params), At: at(ms)}
	}
	ack := &fakehost.Response{Result: json.RawMessage(`{"tailing":true}`), At: at(10)}
	cases := []struct {
		name   string
		resp   *fakehost.Response
		notes  []fakehost.Notification
		done   bool
		id     string
		errSub string
	}{
		{"ack then event", ack, []fakehost.Notification{event(20, `{"id":3,"entry":`+entry("a")+`}`)}, true, "a", ""},
		{"events before the ack: the last one counts", ack, []fakehost.Notification{
			event(1, `{"id":3,"entry":`+entry("a")+`}`), event(2, `{"id":3,"entry":`+entry("b")+`}`),
			event(20, `{"id":3,"entry":`+entry("c")+`}`)}, true, "b", ""},
		{"other ids and entry-less events are ignored", ack, []fakehost.Notification{
			event(20, `{"id":"3","entry":`+entry("x")+`}`), event(21, `{"id":3.0,"entry":`+entry("y")+`}`),
			event(22, `{"id":3}`), event(23, `{"id":3,"entry":`+entry("z")+`}`)}, true, "z", ""},
		{"no ack yet", nil, []fakehost.Notification{event(20, `{"id":3,"entry":`+entry("a")+`}`)}, false, "", ""},
		{"stream error", ack, []fakehost.Notification{event(20, `{"id":3,"error":{"code":-32603,"message":"boom"}}`)}, false, "", "tail stream error"},
		{"error after the loop ended is not read", ack, []fakehost.Notification{
			event(20, `{"id":3,"entry":`+entry("a")+`}`), event(30, `{"id":3,"error":{"code":1,"message":"late"}}`)}, true, "a", ""},
		{"invalid entry", ack, []fakehost.Notification{event(20, `{"id":3,"entry":{"id":"a","level":"loud"}}`)}, false, "", "decode log_storage/event entry"},
		{"error reply", &fakehost.Response{Error: &fakehost.RPCError{Code: -32001, Message: "no tail"}, At: at(10)}, nil, false, "", "(code -32001)"},
	}
	for _, tc := range cases {
		got, done, err := replayTail(set, tc.resp, tc.notes)
		switch {
		case tc.errSub != "":
			if err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Errorf("%s: err %v, want one containing %q", tc.name, err, tc.errSub)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case done != tc.done || (done && got.ID != tc.id):
			t.Errorf("%s: done %v id %q, want done %v id %q", tc.name, done, got.ID, tc.done, tc.id)
		}
	}
}
