package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/plugins/transport-http/internal/control"
)

// newTestServer has no daemon behind it: anything that reaches the pool is
// a 503.
func newTestServer(t *testing.T, o Options) *Server {
	t.Helper()
	o.Pool = control.NewPool(filepath.Join(t.TempDir(), "none.sock"), 1)
	t.Cleanup(o.Pool.Close)
	return New(o)
}

func serve(s *Server, method, target string, body string, hdr map[string]string) *httptest.ResponseRecorder {
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	r.Host = "localhost:8080"
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
		} else {
			r.Header.Set(k, v)
		}
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}

func errCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var env errEnvelope
	if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Error == nil {
		t.Fatalf("not an error envelope: %d %s", w.Code, w.Body)
	}
	return env.Error.Code
}

func TestAuthenticator(t *testing.T) {
	alice := &Actor{UserID: "alice"}
	a := NewAuthenticator([]Credential{{Token: "token-one-0123456789"}, {Token: "token-two-0123456789", Actor: alice}})
	cases := []struct {
		header string
		ok     bool
		actor  *Actor
	}{
		{"Bearer token-one-0123456789", true, nil},
		{"bearer token-two-0123456789", true, alice},
		{"Bearer  token-two-0123456789 ", true, alice},
		{"Bearer token-one-012345678", false, nil},
		{"Bearer token-one-0123456789x", false, nil},
		{"Basic token-one-0123456789", false, nil},
		{"token-one-0123456789", false, nil},
		{"", false, nil},
	}
	for _, c := range cases {
		actor, ok := a.check(c.header)
		if ok != c.ok || actor != c.actor {
			t.Errorf("check(%q) = %v %v, want %v %v", c.header, actor, ok, c.actor, c.ok)
		}
	}
	if NewAuthenticator(nil) != nil {
		t.Error("no credentials must mean no authenticator")
	}
}

func TestHostAllowed(t *testing.T) {
	s := &Server{opts: Options{AllowedHosts: []string{"animus.internal", "gw.example:8443"}}}
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:1": true, "localhost.:80": true, "127.0.0.1:9": true, "127.9.9.9": true,
		"[::1]:80": true, "::1": true, "animus.internal": true, "animus.internal:80": true, "gw.example:8443": true,
		"gw.example:80": false, "": false, "evil.example": false, "localhost.evil.example": false,
		"127.0.0.1.nip.io": false, "0.0.0.0": false, "[::]:80": false,
	} {
		if got := s.hostAllowed(host); got != want {
			t.Errorf("hostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestFromControl(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{&control.RPCError{Code: -32602, Category: "not_found"}, 404, "not_found"},
		{&control.RPCError{Code: -32602, Category: "permission_denied"}, 403, "permission_denied"},
		{&control.RPCError{Code: -32600, Category: "conflict"}, 409, "conflict"},
		{&control.RPCError{Code: -32603, Category: "unavailable"}, 503, "unavailable"},
		{&control.RPCError{Code: -32001, Category: "not_supported"}, 501, "not_supported"},
		{&control.RPCError{Code: -32603, Category: "internal"}, 500, "internal"},
		{&control.RPCError{Code: -32603, Category: "novel"}, 500, "novel"},
		{&control.RPCError{Code: -32602}, 400, "invalid_request"},
		{&control.RPCError{Code: -32601}, 501, "unknown_method"},
		{fmt.Errorf("x: %w", control.ErrUnreachable), 503, "daemon_unreachable"},
		{fmt.Errorf("x: %w", control.ErrConnectionLost), 502, "wire_error"},
		{context.DeadlineExceeded, 504, "daemon_timeout"},
		{control.ErrClosed, 503, "shutting_down"},
		{fmt.Errorf("x: %w", context.Canceled), 503, "cancelled"},
		{errors.New("surprise"), 500, "internal"},
	}
	for _, c := range cases {
		e := fromControl("m", c.err)
		if e.Status != c.status || e.Code != c.code {
			t.Errorf("fromControl(%v) = %d %s, want %d %s", c.err, e.Status, e.Code, c.status, c.code)
		}
	}
}

// Bad input is a 400 even though no daemon is reachable: validation comes
// before the dial (the reference answered 503).
func TestValidationBeforeDial(t *testing.T) {
	s := newTestServer(t, Options{})
	for _, c := range []struct{ method, target, body string }{
		{"GET", "/api/v1/workflows?status=nope", ""},
		{"POST", "/api/v1/queue/enqueue", `{"priority":1}`},
		{"POST", "/api/v1/queue/reorder", `{"id":"q","subject_ids":["a"],"position":"front"}`},
		{"GET", "/api/v1/subjects/bare-id", ""},
		{"POST", "/api/v1/workflows/run", `{"task_id":"t","actor":{"user_id":"x"}}`},
	} {
		w := serve(s, c.method, c.target, c.body, nil)
		if w.Code != 400 || errCode(t, w) != "invalid_input" {
			t.Errorf("%s %s: %d %s", c.method, c.target, w.Code, w.Body)
		}
	}
	w := serve(s, "GET", "/api/v1/daemon/status", "", nil)
	if w.Code != 503 || errCode(t, w) != "daemon_unreachable" {
		t.Errorf("valid request with no daemon: %d %s", w.Code, w.Body)
	}
}

func TestEventIDAndResume(t *testing.T) {
	spec := daemonEventStream
	ts := "2030-01-01T00:00:00.5Z"
	id, parsed, itemID := eventID(spec, json.RawMessage(`{"id":"evt-1","occurred_at":"`+ts+`"}`), 9)
	if id != "2030-01-01T00:00:00.5Z|evt-1" || itemID != "evt-1" || parsed.IsZero() {
		t.Fatalf("eventID = %q %v %q", id, parsed, itemID)
	}
	for _, data := range []string{`{"id":"a\nb","occurred_at":"` + ts + `"}`, `{"occurred_at":"nope","id":"x"}`, `[1]`, `{"id":7}`} {
		if id, _, _ := eventID(spec, json.RawMessage(data), 9); id != "9" {
			t.Errorf("eventID(%s) = %q, want the sequence fallback", data, id)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Last-Event-ID", "2030-01-01T00:00:00.5Z|evt-2")
	p := parseResume(r, spec)
	if p == nil {
		t.Fatal("no resume point")
	}
	t0, _ := time.Parse(time.RFC3339Nano, ts)
	earlier, later := t0.Add(-time.Second), t0.Add(time.Second)
	steps := []struct {
		ts   time.Time
		id   string
		skip bool
	}{
		{earlier, "evt-0", true}, {t0, "evt-1", true}, {t0, "evt-2", true}, {t0, "evt-3", false}, {later, "evt-4", false},
	}
	for _, st := range steps {
		if got := p.skip(st.ts, st.id); got != st.skip {
			t.Errorf("skip(%s) = %v, want %v", st.id, got, st.skip)
		}
	}
	r.Header.Set("Last-Event-ID", "17")
	if parseResume(r, spec) != nil {
		t.Error("a sequence id must not resume")
	}
	if parseResume(r, workflowEventStream) != nil {
		t.Error("workflow events cannot resume")
	}
}

// writeOK builds the success envelope by hand; it must stay byte for byte
// what rustjson.Encode writes for okEnvelope, whitespace, HTML characters,
// U+2028 and invalid input included.
func TestWriteOKMatchesEncoder(t *testing.T) {
	for _, data := range []string{"", "null", `{"a":1}`, " { \"a\" : [ 1 , 2 ] ,\n\"b\":\"x y\" } ",
		`{"h":"<b>&amp;</b>","s":"\u2028 \u2029","n":1.50e3}`, `"\u00e9"`, "\"\u2028<\u2029>\"", `{"a":`, `[1,]`} {
		rec := httptest.NewRecorder()
		writeOK(rec, json.RawMessage(data))
		var want bytes.Buffer
		raw := json.RawMessage(data)
		if data == "" {
			raw = json.RawMessage("null")
		}
		_ = rustjson.Encode(&want, okEnvelope{OK: true, Data: raw})
		if rec.Code != http.StatusOK || rec.Body.String() != want.String() {
			t.Errorf("writeOK(%q) = %d %q, want 200 %q", data, rec.Code, rec.Body.String(), want.String())
		}
	}
}
