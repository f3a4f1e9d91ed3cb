package mapping

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// The event kinds, recorded in payload.kind and listed by trigger/schema.
const (
	KindMention = "slack.mention"
	KindDM      = "slack.dm"
)

// Kinds is trigger/schema's kinds list.
var Kinds = []string{KindMention, KindDM}

// ActionCreateTask is the action_hint of every event: a mention or a DM
// asks for work to be done.
const ActionCreateTask = "create_task"

// reservedPrefix marks the keys the daemon adds to the payload it hands
// the workflow; plugin-supplied ones would be moved aside, so none are sent.
const reservedPrefix = "__animus_"

// Identity is the bot's own user and bot ids (from auth.test). Messages from
// either are never events: the bot's replies must not trigger it again.
type Identity struct {
	UserID string
	BotID  string
}

// Rules are everything Map needs besides the event.
type Rules struct {
	MentionTriggerID string
	DMTriggerID      string
	// Channels is the allowlist; empty allows every channel.
	Channels map[string]bool
	// IgnoreBots drops messages from any bot, not only this one.
	IgnoreBots bool
	Self       Identity
}

// Event is the flat trigger/event params. Optional fields are omitted when
// empty, never null.
type Event struct {
	EventID    string          `json:"event_id"`
	TriggerID  string          `json:"trigger_id,omitempty"`
	ActionHint string          `json:"action_hint,omitempty"`
	Payload    json.RawMessage `json:"payload"`

	// Kind is payload.kind; SlackEventID is the outer Ev… id (may be empty).
	Kind         string `json:"-"`
	SlackEventID string `json:"-"`
}

// DedupKeys are the seen-set keys: the stable event id (one Slack message
// is one event, even when it arrives both as app_mention and as message)
// and Slack's own event id (retries and replays of one delivery).
func (e Event) DedupKeys() []string {
	keys := []string{"event:" + e.EventID}
	if e.SlackEventID != "" {
		keys = append(keys, "slack:"+e.SlackEventID)
	}
	return keys
}

// Drop explains why an event_callback produced no event. Malformed drops
// are worth a warning; the others are Slack traffic this plugin does not
// handle (edits, channel chatter, reactions, the bot's own replies).
type Drop struct {
	Reason    string
	Malformed bool
}

func (d *Drop) Error() string { return d.Reason }

func drop(format string, args ...any) *Drop { return &Drop{Reason: fmt.Sprintf(format, args...)} }

func malformed(format string, args ...any) *Drop {
	return &Drop{Reason: fmt.Sprintf(format, args...), Malformed: true}
}

// callback is the outer Events API envelope (the payload of a Socket Mode
// events_api envelope, or the body of an Events API request).
type callback struct {
	Type    string          `json:"type"`
	TeamID  string          `json:"team_id"`
	EventID string          `json:"event_id"`
	Event   json.RawMessage `json:"event"`
}

// Map builds the event for one event_callback, or returns a *Drop.
func Map(raw []byte, r Rules) (Event, *Drop) {
	var cb callback
	if err := json.Unmarshal(raw, &cb); err != nil {
		return Event{}, malformed("event_callback does not decode: %v", err)
	}
	if cb.Type != "event_callback" {
		return Event{}, drop("outer type %q is not event_callback", cb.Type)
	}
	inner, err := decodeObject(cb.Event)
	if err != nil {
		return Event{}, malformed("inner event: %v", err)
	}
	kind, d := classify(inner)
	if d != nil {
		return Event{}, d
	}
	if d := r.admit(inner); d != nil {
		return Event{}, d
	}
	ts := firstString(inner, "ts", "event_ts")
	if ts == "" {
		return Event{}, malformed("%s without ts", kind)
	}
	team := cb.TeamID
	if team == "" {
		team = firstString(inner, "team", "team_id")
	}
	channel := str(inner, "channel")
	ev := Event{
		EventID:      "slack:" + orUnknown(team) + "/" + orUnknown(channel) + "/" + ts,
		ActionHint:   ActionCreateTask,
		Kind:         kind,
		SlackEventID: cb.EventID,
	}
	if kind == KindMention {
		ev.TriggerID = r.MentionTriggerID
	} else {
		ev.TriggerID = r.DMTriggerID
	}
	clean(inner)
	inner["kind"] = kind
	// rustjson keeps "<@U123>" readable, as serde_json writes it.
	if ev.Payload, err = rustjson.Marshal(inner); err != nil {
		return Event{}, malformed("payload: %v", err)
	}
	return ev, nil
}

// classify maps the inner event type to a kind: app_mention is a mention;
// a message in a direct-message channel without subtype (so not an edit,
// deletion, join or bot_message) is a DM; everything else is dropped.
func classify(inner map[string]any) (string, *Drop) {
	switch t := str(inner, "type"); t {
	case "app_mention":
		return KindMention, nil
	case "message":
		if st, ok := inner["subtype"]; ok && st != nil {
			return "", drop("message subtype %v", st)
		}
		if ct := str(inner, "channel_type"); ct != "im" {
			return "", drop("message in a %q channel is not a direct message", ct)
		}
		return KindDM, nil
	default:
		return "", drop("event type %q is not handled", t)
	}
}

// admit applies the loop guard, the bot filter and the channel allowlist.
func (r Rules) admit(inner map[string]any) *Drop {
	user, botID := str(inner, "user"), str(inner, "bot_id")
	if (r.Self.UserID != "" && user == r.Self.UserID) || (r.Self.BotID != "" && botID == r.Self.BotID) {
		return drop("the bot's own message")
	}
	if r.IgnoreBots {
		if _, profile := inner["bot_profile"]; botID != "" || profile {
			return drop("message from a bot")
		}
	}
	if len(r.Channels) > 0 {
		if ch := str(inner, "channel"); !r.Channels[ch] {
			return drop("channel %q is not in SLACK_FILTER_CHANNELS", ch)
		}
	}
	return nil
}

func decodeObject(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("missing")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers exactly as Slack wrote them
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	return m, nil
}

// clean removes null values and reserved keys at every depth. The daemon
// would move __animus_ keys aside and nulls carry nothing a workflow can
// template; removing both keeps the payload what the issue promises.
func clean(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil || strings.HasPrefix(k, reservedPrefix) {
				delete(x, k)
				continue
			}
			x[k] = clean(e)
		}
	case []any:
		out := x[:0]
		for _, e := range x {
			if e != nil {
				out = append(out, clean(e))
			}
		}
		return out
	}
	return v
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := str(m, k); s != "" {
			return s
		}
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
