package fakeslack

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Call is one recorded Web API request and the fake's answer to it.
type Call struct {
	Method      string
	Form        url.Values // form-encoded params (slack-go's encoding)
	Auth        string     // Authorization header as sent
	ContentType string     // Content-Type header as sent
	At          time.Time
	// Status and Answer are the HTTP status and the body the fake
	// answered, as sent (an injected Failure's included). They are in
	// place before the client can have read the answer, so a test that
	// has its answer sees them in Calls.
	Status int
	Answer string
}

// Failure is an injected answer for the next call of a method.
type Failure struct {
	// Status is the HTTP status (default 200). 429 adds Retry-After and
	// Slack's {"ok":false,"error":"ratelimited"}; 5xx sends an HTML page.
	Status int
	// RetryAfter is the Retry-After header value for a 429 ("" = none).
	RetryAfter string
	// Error, with status 200, is the ok:false error code.
	Error string
	// Body, when set, is the whole answer, sent as is with Status (default
	// 200) as application/json, whatever the other fields say: for an
	// answer off Slack's documented shapes (fields of a type slack-go
	// cannot decode), which a client must still survive.
	Body string
}

// FailNext makes the next len(fs) calls of method answer fs in order.
func (s *Server) FailNext(method string, fs ...Failure) {
	s.mu.Lock()
	s.failures[method] = append(s.failures[method], fs...)
	s.mu.Unlock()
}

// SetFailure makes every call of method answer f, once the FailNext
// queue is empty, until SetFailure(method, Failure{}) restores normal
// answers: an outage that lasts as long as the test says, such as an
// auth.test that keeps failing until a background retry finds it back.
func (s *Server) SetFailure(method string, f Failure) {
	s.mu.Lock()
	if f == (Failure{}) {
		delete(s.standing, method)
	} else {
		s.standing[method] = f
	}
	s.mu.Unlock()
}

type handler func(w http.ResponseWriter, form url.Values)

// webMethod wraps a method handler: record the call, apply an injected
// failure, check the token, answer, and record the answer.
func (s *Server) webMethod(method string, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		form, _ := url.ParseQuery(string(body))
		for k, v := range r.URL.Query() {
			form[k] = v
		}
		s.mu.Lock()
		s.calls = append(s.calls, Call{Method: method, Form: form, Auth: r.Header.Get("Authorization"),
			ContentType: r.Header.Get("Content-Type"), At: time.Now()})
		w = answerRecorder{ResponseWriter: w, s: s, call: len(s.calls) - 1}
		var f *Failure
		if q := s.failures[method]; len(q) > 0 {
			f, s.failures[method] = &q[0], q[1:]
		} else if sf, ok := s.standing[method]; ok {
			f = &sf
		}
		s.broadcastLocked()
		s.mu.Unlock()
		if f != nil && s.fail(w, *f) {
			return
		}
		token := bearer(r)
		if token == "" {
			token = form.Get("token")
		}
		switch {
		case token == "":
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "not_authed"})
		case method != "auth.test" && equal(token, s.opts.AppToken):
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "not_allowed_token_type"})
		case !equal(token, s.opts.BotToken) && !equal(token, s.opts.AppToken):
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
		default:
			h(w, form)
		}
	}
}

// answerRecorder copies a method's answer into its Call before passing
// it on, so the record is complete by the time the client reads the end.
type answerRecorder struct {
	http.ResponseWriter
	s    *Server
	call int // index in s.calls
}

func (a answerRecorder) WriteHeader(status int) {
	a.s.mu.Lock()
	a.s.calls[a.call].Status = status
	a.s.mu.Unlock()
	a.ResponseWriter.WriteHeader(status)
}

func (a answerRecorder) Write(p []byte) (int, error) {
	a.s.mu.Lock()
	c := &a.s.calls[a.call]
	c.Status = cmp.Or(c.Status, http.StatusOK) // a Write without WriteHeader sends 200
	c.Answer += string(p)
	a.s.mu.Unlock()
	return a.ResponseWriter.Write(p)
}

func (s *Server) fail(w http.ResponseWriter, f Failure) bool {
	switch {
	case f.Body != "":
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(cmp.Or(f.Status, http.StatusOK))
		io.WriteString(w, f.Body)
	case f.Status == http.StatusTooManyRequests:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writeJSON(w, f.Status, map[string]any{"ok": false, "error": "ratelimited"})
	case f.Status >= 500:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(f.Status)
		io.WriteString(w, "<html><body>Slack is having trouble ("+http.StatusText(f.Status)+")</body></html>")
	case f.Error != "":
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": f.Error})
	default:
		return false
	}
	return true
}

func (s *Server) authTest(w http.ResponseWriter, _ url.Values) {
	writeJSON(w, http.StatusOK, map[string]any{
		"ok": true, "url": "https://fake.slack.com/", "team": "Fake Workspace", "user": "animus",
		"team_id": s.opts.TeamID, "user_id": s.opts.BotUserID, "bot_id": s.opts.BotID, "is_enterprise_install": false,
	})
}

func (s *Server) postMessage(w http.ResponseWriter, form url.Values) {
	channel, text, blocks := form.Get("channel"), form.Get("text"), form.Get("blocks")
	switch {
	case channel == "":
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	case text == "" && (blocks == "" || blocks == "[]"):
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "no_text"})
		return
	}
	ts := s.NextTS()
	msg := map[string]any{"type": "message", "text": text, "user": s.opts.BotUserID, "bot_id": s.opts.BotID,
		"app_id": s.opts.AppID, "ts": ts, "team": s.opts.TeamID}
	if tt := form.Get("thread_ts"); tt != "" {
		msg["thread_ts"] = tt
	}
	if blocks != "" {
		msg["blocks"] = json.RawMessage(blocks)
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": channel, "ts": ts, "message": msg})
	if s.opts.EchoBotMessages && strings.HasPrefix(channel, "D") {
		ev := map[string]any{}
		for k, v := range msg {
			ev[k] = v
		}
		ev["channel"], ev["channel_type"], ev["event_ts"] = channel, "im", ts
		id := "echo-" + s.NextID()
		s.mu.Lock()
		s.echoes = append(s.echoes, id)
		s.mu.Unlock()
		_ = s.Send(EventsAPI(id, 0, Callback(s.opts.TeamID, "EvE"+id, ev)))
	}
}

func (s *Server) postEphemeral(w http.ResponseWriter, form url.Values) {
	switch {
	case form.Get("channel") == "":
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
	case form.Get("user") == "":
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "user_not_in_channel"})
	case form.Get("text") == "" && form.Get("blocks") == "":
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "no_text"})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "message_ts": s.NextTS()})
	}
}

// conversationsOpen opens a DM; users starting with "U404" do not exist.
func (s *Server) conversationsOpen(w http.ResponseWriter, form url.Values) {
	users := form.Get("users")
	switch {
	case users == "":
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "users_list_not_supplied"})
	case strings.HasPrefix(users, "U404"):
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "user_not_found"})
	default:
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": map[string]any{"id": DMChannel(users)}})
	}
}

// DMChannel is the DM channel id the fake opens with user.
func DMChannel(user string) string { return "D" + strings.TrimPrefix(user, "U") }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return ""
}

// equal compares tokens in constant time, as a real server would.
func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
