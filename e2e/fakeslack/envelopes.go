package fakeslack

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Mention is an app_mention inner event as Slack documents it (no team).
func Mention(channel, user, text, ts string) map[string]any {
	return map[string]any{"type": "app_mention", "user": user, "text": text, "ts": ts,
		"channel": channel, "event_ts": ts}
}

// DirectMessage is a message.im inner event from a person.
func DirectMessage(channel, user, text, ts string) map[string]any {
	return map[string]any{"type": "message", "channel_type": "im", "user": user, "text": text, "ts": ts,
		"channel": channel, "event_ts": ts}
}

// Callback wraps an inner event in Slack's event_callback.
func Callback(teamID, eventID string, event map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{
		"token":        "verification-token-unused",
		"team_id":      teamID,
		"api_app_id":   "A0FAKE",
		"event":        event,
		"type":         "event_callback",
		"event_id":     eventID,
		"event_time":   time.Now().Unix(),
		"authed_users": []string{},
	})
	return b
}

// EventsAPI wraps an event_callback in a Socket Mode events_api envelope.
func EventsAPI(envelopeID string, retryAttempt int, callback []byte) []byte {
	reason := ""
	if retryAttempt > 0 {
		reason = "timeout"
	}
	b, _ := json.Marshal(map[string]any{
		"envelope_id":              envelopeID,
		"type":                     "events_api",
		"accepts_response_payload": false,
		"retry_attempt":            retryAttempt,
		"retry_reason":             reason,
		"payload":                  json.RawMessage(callback),
	})
	return b
}

// Sign returns the X-Slack-Request-Timestamp and X-Slack-Signature headers
// Slack sends with an Events API request: v0=hex(HMAC-SHA256(secret,
// "v0:<ts>:<body>")).
func Sign(secret string, at time.Time, body []byte) (timestamp, signature string) {
	timestamp = strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + timestamp + ":"))
	mac.Write(body)
	return timestamp, "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// EventRequest is the request the Events API sends to an app's request
// URL: body POSTed as JSON, signed with secret at `at` (Sign).
func EventRequest(url, secret string, at time.Time, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	ts, sig := Sign(secret, at, body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", sig)
	return req, nil
}
