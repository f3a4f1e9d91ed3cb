package api

import (
	"strings"
	"testing"
)

// CORS: exact origins only; a preflight from one is answered by the
// middleware on any path; any other origin is refused outright.
func TestCORS(t *testing.T) {
	d := newFakeDaemon(t)
	h := newHarness(t, Options{AllowedOrigins: []string{"http://localhost:5173"}}, d)
	cases := []struct {
		name, method, target string
		header               map[string]string
		status               int
		allowOrigin          string
		preflight            bool
	}{
		{"allowed origin", "GET", "/api/v1/daemon/status", map[string]string{"Origin": "http://localhost:5173"}, 200, "http://localhost:5173", false},
		{"preflight", "OPTIONS", "/api/v1/queue/enqueue",
			map[string]string{"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"}, 204, "http://localhost:5173", true},
		{"preflight on an unknown path", "OPTIONS", "/nowhere",
			map[string]string{"Origin": "http://localhost:5173", "Access-Control-Request-Method": "GET"}, 204, "http://localhost:5173", true},
		{"OPTIONS without a request method is routed", "OPTIONS", "/api/v1/daemon/status",
			map[string]string{"Origin": "http://localhost:5173"}, 405, "http://localhost:5173", false},
		{"prefix of an allowed origin", "GET", "/api/v1/daemon/status", map[string]string{"Origin": "http://localhost:5173.evil.com"}, 403, "", false},
		{"other scheme", "GET", "/healthz", map[string]string{"Origin": "https://localhost:5173"}, 403, "", false},
		{"no origin", "GET", "/api/v1/daemon/status", nil, 200, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := h.on(t).do(request{method: c.method, target: c.target, header: c.header})
			if x.status != c.status || x.header.Get("Access-Control-Allow-Origin") != c.allowOrigin {
				t.Fatalf("%d ACAO %q: %s", x.status, x.header.Get("Access-Control-Allow-Origin"), x.body)
			}
			if c.header["Origin"] != "" && x.header.Get("Vary") != "Origin" {
				t.Errorf("Vary %q", x.header.Get("Vary"))
			}
			if c.status == 403 {
				x.wantErr(t, 403, "forbidden_origin")
			}
			if got := x.header.Get("Access-Control-Allow-Methods"); (got != "") != c.preflight ||
				(c.preflight && (!strings.Contains(got, "PATCH") || x.header.Get("Access-Control-Allow-Headers") != corsHeaders)) {
				t.Errorf("preflight headers %v", x.header)
			}
		})
	}
}

// The Host guard refuses names that are not loopback or allowed, before
// auth, so a rebinding page learns nothing.
func TestHostGuard(t *testing.T) {
	h := newHarness(t, Options{HostGuard: true, AllowedHosts: []string{"animus.example"},
		Auth: NewAuthenticator([]Credential{{Token: testToken}})}, newFakeDaemon(t))
	cases := []struct {
		host   string
		status int
	}{
		{"localhost:8080", 200}, {"127.0.0.1", 200}, {"[::1]:1", 200}, {"animus.example", 200},
		{"evil.example", 403}, {"animus.example.evil", 403},
	}
	for _, c := range cases {
		x := h.do(request{method: "GET", target: "/api/v1/daemon/status", header: map[string]string{"Host": c.host}, noAuth: true})
		want := c.status
		if want == 200 {
			want = 401 // past the guard, the token is checked
		}
		if x.status != want {
			t.Errorf("Host %s: %d %s, want %d", c.host, x.status, x.body, want)
		}
		if want == 403 {
			x.wantErr(t, 403, "forbidden_host")
		}
	}
}

// Missing and wrong tokens look alike; public routes need none; the
// actor of the token, never of the body, reaches workflow/run and
// workflow/execute.
func TestAuthAndActor(t *testing.T) {
	d := newFakeDaemon(t)
	alice := &Actor{UserID: "alice", Claims: []string{"ops"}, TenantID: "t1"}
	h := newHarness(t, Options{Auth: NewAuthenticator([]Credential{
		{Token: testToken, Actor: alice}, {Token: "anonymous-token-0123456789"},
	})}, d)
	for _, hdr := range []map[string]string{nil, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": "Basic " + testToken}} {
		x := h.do(request{method: "GET", target: "/api/v1/daemon/status", noAuth: true, header: hdr})
		x.wantErr(t, 401, "unauthenticated")
		if x.header.Get("WWW-Authenticate") != `Bearer realm="animus"` || x.body == nil || strings.Contains(string(x.body), "wrong") {
			t.Errorf("401 %v %s", x.header, x.body)
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if x := h.do(request{method: "GET", target: p, noAuth: true}); x.status != 200 {
			t.Errorf("%s without a token: %d", p, x.status)
		}
	}

	cases := []struct {
		name, token, target, body, params string
	}{
		{"run as alice", testToken, "/api/v1/workflows/run", `{"task_id":"t"}`,
			`{"task_id":"t","actor":{"user_id":"alice","claims":["ops"],"tenant_id":"t1"}}`},
		{"execute as alice", testToken, "/api/v1/workflows/execute", `{"definition":"d"}`,
			`{"definition":"d","actor":{"user_id":"alice","claims":["ops"],"tenant_id":"t1"}}`},
		{"a token without an actor sends none", "anonymous-token-0123456789", "/api/v1/workflows/run", `{"task_id":"t"}`, `{"task_id":"t"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(d.received())
			x := h.on(t).do(request{method: "POST", target: c.target, body: c.body, noAuth: true,
				header: map[string]string{"Authorization": "Bearer " + c.token}})
			x.wantData(t, nil)
			calls := d.received()[before:]
			if len(calls) != 1 || !jsonEqual(t, string(calls[0].Params), c.params) {
				t.Errorf("calls %+v, want params %s", calls, c.params)
			}
		})
	}
}

// Outside the table: unknown paths and methods answer the envelope, 405
// with the methods the path does serve.
func TestNotFoundAndMethodNotAllowed(t *testing.T) {
	h := newHarness(t, Options{}, newFakeDaemon(t))
	cases := []struct {
		method, target string
		status         int
		code           string
		allow          string
	}{
		{"GET", "/api/v1/nothing", 404, "route_not_found", ""},
		{"GET", "/api/v1/workflows/run", 405, "method_not_allowed", "POST"},
		{"GET", "/api/v1/subjects/next", 405, "method_not_allowed", "POST"},
		{"PUT", "/api/v1/subjects/task:T-1", 405, "method_not_allowed", "GET,PATCH"},
		{"DELETE", "/api/v1/daemon/status", 405, "method_not_allowed", "GET"},
		{"POST", "/api/v1/daemon/logs", 405, "method_not_allowed", "GET,DELETE"},
	}
	for _, c := range cases {
		x := h.do(request{method: c.method, target: c.target})
		x.wantErr(t, c.status, c.code)
		if got := strings.Join(x.header.Values("Allow"), ","); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.target, got, c.allow)
		}
	}
}
