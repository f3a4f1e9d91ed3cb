package mapping

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

func callbackJSON(t *testing.T, team, evID string, inner any) []byte {
	t.Helper()
	cb := map[string]any{"type": "event_callback", "team_id": team, "api_app_id": "A1", "event": inner}
	if evID != "" {
		cb["event_id"] = evID
	}
	if team == "" {
		delete(cb, "team_id")
	}
	b, err := json.Marshal(cb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var rules = Rules{
	MentionTriggerID: "slack-mention",
	DMTriggerID:      "slack-dm",
	IgnoreBots:       true,
	Self:             Identity{UserID: "UBOT", BotID: "BBOT"},
}

func mention(extra map[string]any) map[string]any {
	m := map[string]any{"type": "app_mention", "user": "U1", "text": "<@UBOT> please review", "ts": "1715701234.000100",
		"channel": "C9", "event_ts": "1715701234.000100"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func dm(extra map[string]any) map[string]any {
	m := map[string]any{"type": "message", "channel_type": "im", "user": "U1", "text": "hi", "ts": "1715701300.000200",
		"channel": "D7", "event_ts": "1715701300.000200"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func TestMapEvents(t *testing.T) {
	cases := []struct {
		name        string
		team, evID  string
		inner       map[string]any
		rules       *Rules
		wantID      string
		wantTrigger string
		wantKind    string
		wantPayload map[string]any // compared exactly
	}{
		{
			name: "mention", team: "T1", evID: "Ev1", inner: mention(nil),
			wantID: "slack:T1/C9/1715701234.000100", wantTrigger: "slack-mention", wantKind: KindMention,
			wantPayload: map[string]any{"type": "app_mention", "user": "U1", "text": "<@UBOT> please review",
				"ts": "1715701234.000100", "channel": "C9", "event_ts": "1715701234.000100", "kind": KindMention},
		},
		{
			name: "dm", team: "T1", evID: "Ev2", inner: dm(nil),
			wantID: "slack:T1/D7/1715701300.000200", wantTrigger: "slack-dm", wantKind: KindDM,
		},
		{
			name: "outer team wins over inner team", team: "T1", inner: mention(map[string]any{"team": "T-INNER"}),
			wantID: "slack:T1/C9/1715701234.000100", wantTrigger: "slack-mention", wantKind: KindMention,
		},
		{
			name: "inner team when outer missing", inner: mention(map[string]any{"team": "T-INNER"}),
			wantID: "slack:T-INNER/C9/1715701234.000100", wantTrigger: "slack-mention", wantKind: KindMention,
		},
		{
			name: "unknown team", inner: mention(nil),
			wantID: "slack:unknown/C9/1715701234.000100", wantTrigger: "slack-mention", wantKind: KindMention,
		},
		{
			name: "event_ts when ts missing", team: "T1", inner: mention(map[string]any{"ts": nil}),
			wantID: "slack:T1/C9/1715701234.000100", wantTrigger: "slack-mention", wantKind: KindMention,
		},
		{
			name: "other bots admitted when not ignored", team: "T1", inner: mention(map[string]any{"bot_id": "BOTHER"}),
			rules:  &Rules{MentionTriggerID: "m", DMTriggerID: "d", Self: Identity{UserID: "UBOT", BotID: "BBOT"}},
			wantID: "slack:T1/C9/1715701234.000100", wantTrigger: "m", wantKind: KindMention,
		},
		{
			name: "allowed channel", team: "T1", inner: dm(nil),
			rules:  &Rules{MentionTriggerID: "m", DMTriggerID: "d", Channels: map[string]bool{"D7": true}},
			wantID: "slack:T1/D7/1715701300.000200", wantTrigger: "d", wantKind: KindDM,
		},
		{
			name: "nulls and reserved keys removed at every depth", team: "T1",
			inner: mention(map[string]any{
				"thread_ts": nil, "__animus_event_id": "spoof",
				"blocks": []any{map[string]any{"type": "rich_text", "block_id": nil, "__animus_x": 1}, nil},
			}),
			wantID: "slack:T1/C9/1715701234.000100", wantTrigger: "slack-mention", wantKind: KindMention,
			wantPayload: map[string]any{"type": "app_mention", "user": "U1", "text": "<@UBOT> please review",
				"ts": "1715701234.000100", "channel": "C9", "event_ts": "1715701234.000100", "kind": KindMention,
				"blocks": []any{map[string]any{"type": "rich_text"}}},
		},
		{
			name: "kind overrides a spoofed kind", team: "T1", inner: dm(map[string]any{"kind": "slack.mention"}),
			wantID: "slack:T1/D7/1715701300.000200", wantTrigger: "slack-dm", wantKind: KindDM,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rules
			if tc.rules != nil {
				r = *tc.rules
			}
			ev, d := Map(callbackJSON(t, tc.team, tc.evID, tc.inner), r)
			if d != nil {
				t.Fatalf("dropped: %v", d)
			}
			if ev.EventID != tc.wantID || ev.TriggerID != tc.wantTrigger || ev.Kind != tc.wantKind ||
				ev.ActionHint != "create_task" || ev.SlackEventID != tc.evID {
				t.Fatalf("event = %+v", ev)
			}
			wire, err := rustjson.Marshal(ev) // as pluginkit writes frames: no HTML escaping
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(wire), "null") || strings.Contains(string(wire), "__animus_") {
				t.Fatalf("wire form has a null or a reserved key: %s", wire)
			}
			if strings.Contains(string(wire), `\u003c`) {
				t.Fatalf("payload is HTML-escaped: %s", wire)
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(wire, &top); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"subject_id", "subject_kind"} {
				if _, ok := top[k]; ok {
					t.Fatalf("%s must be omitted: %s", k, wire)
				}
			}
			var payload map[string]any
			if err := json.Unmarshal(ev.Payload, &payload); err != nil {
				t.Fatal(err)
			}
			if payload["kind"] != tc.wantKind {
				t.Fatalf("payload.kind = %v", payload["kind"])
			}
			if tc.wantPayload != nil && !reflect.DeepEqual(payload, tc.wantPayload) {
				t.Fatalf("payload = %v\nwant      %v", payload, tc.wantPayload)
			}
		})
	}
}

func TestMapDrops(t *testing.T) {
	cases := []struct {
		name      string
		raw       []byte
		rules     *Rules
		reason    string
		malformed bool
	}{
		{"not json", []byte(`{"type":`), nil, "does not decode", true},
		{"url_verification", []byte(`{"type":"url_verification","challenge":"x"}`), nil, `"url_verification" is not event_callback`, false},
		{"no inner event", []byte(`{"type":"event_callback","team_id":"T1"}`), nil, "inner event: missing", true},
		{"inner not object", []byte(`{"type":"event_callback","event":[1]}`), nil, "not an object", true},
		{"channel message", callbackJSON(t, "T1", "Ev", dm(map[string]any{"channel_type": "channel", "channel": "C1"})), nil, "not a direct message", false},
		{"dm edit", callbackJSON(t, "T1", "Ev", dm(map[string]any{"subtype": "message_changed"})), nil, "message subtype message_changed", false},
		{"dm bot_message subtype", callbackJSON(t, "T1", "Ev", dm(map[string]any{"subtype": "bot_message", "bot_id": "B2"})), nil, "subtype bot_message", false},
		{"reaction", callbackJSON(t, "T1", "Ev", map[string]any{"type": "reaction_added", "user": "U1"}), nil, `"reaction_added" is not handled`, false},
		{"own user", callbackJSON(t, "T1", "Ev", dm(map[string]any{"user": "UBOT"})), nil, "own message", false},
		{"own bot id", callbackJSON(t, "T1", "Ev", mention(map[string]any{"bot_id": "BBOT", "user": "U9"})), nil, "own message", false},
		{"own user even with bots admitted", callbackJSON(t, "T1", "Ev", dm(map[string]any{"user": "UBOT"})),
			&Rules{Self: Identity{UserID: "UBOT"}}, "own message", false},
		{"other bot", callbackJSON(t, "T1", "Ev", dm(map[string]any{"bot_id": "B2"})), nil, "from a bot", false},
		{"bot profile", callbackJSON(t, "T1", "Ev", mention(map[string]any{"bot_profile": map[string]any{"id": "B3"}})), nil, "from a bot", false},
		{"channel not allowed", callbackJSON(t, "T1", "Ev", mention(nil)),
			&Rules{Channels: map[string]bool{"C1": true}}, `"C9" is not in SLACK_FILTER_CHANNELS`, false},
		{"dm not allowed", callbackJSON(t, "T1", "Ev", dm(nil)),
			&Rules{Channels: map[string]bool{"C9": true}}, `"D7" is not in SLACK_FILTER_CHANNELS`, false},
		{"no ts at all", callbackJSON(t, "T1", "Ev", mention(map[string]any{"ts": nil, "event_ts": nil})), nil, "without ts", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rules
			if tc.rules != nil {
				r = *tc.rules
			}
			ev, d := Map(tc.raw, r)
			if d == nil {
				t.Fatalf("not dropped: %+v", ev)
			}
			if !strings.Contains(d.Reason, tc.reason) || d.Malformed != tc.malformed {
				t.Fatalf("drop = %+v, want reason containing %q, malformed %v", d, tc.reason, tc.malformed)
			}
		})
	}
}

func TestDedupKeys(t *testing.T) {
	ev := Event{EventID: "slack:T/C/1", SlackEventID: "Ev1"}
	if got := ev.DedupKeys(); !reflect.DeepEqual(got, []string{"event:slack:T/C/1", "slack:Ev1"}) {
		t.Fatalf("keys = %v", got)
	}
	ev.SlackEventID = ""
	if got := ev.DedupKeys(); !reflect.DeepEqual(got, []string{"event:slack:T/C/1"}) {
		t.Fatalf("keys = %v", got)
	}
}

func TestNumbersKeptExactly(t *testing.T) {
	raw := []byte(`{"type":"event_callback","team_id":"T1","event":{"type":"app_mention","channel":"C1","ts":"1.2","user":"U1","n":12345678901234567890,"f":1.50}}`)
	ev, d := Map(raw, rules)
	if d != nil {
		t.Fatal(d)
	}
	if !strings.Contains(string(ev.Payload), `"n":12345678901234567890`) || !strings.Contains(string(ev.Payload), `"f":1.50`) {
		t.Fatalf("numbers changed: %s", ev.Payload)
	}
}
