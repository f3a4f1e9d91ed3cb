package transporthttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
)

// aliceToken is held in a variable the plugin does not declare, so its
// redactor does not know it: it must stay out of the logs by design.
const aliceToken = "alice-token-fedcba9876543210"

// Bearer auth: missing and wrong tokens get the same 401 envelope, probes
// stay public, config.tokens attaches the actor to workflow/run and
// workflow/execute, and no token value ever reaches the log even at debug.
func TestAuth(t *testing.T) {
	g := startGateway(t, setup{
		daemon: &fakedaemon.Options{},
		env:    map[string]string{"ANIMUS_HTTP_TOKEN": testToken, "ANIMUS_PLUGIN_LOG_LEVEL": "debug"},
		extra:  map[string]string{"ALICE_TOKEN": aliceToken},
		config: map[string]any{"tokens": map[string]any{"ALICE_TOKEN": map[string]any{"user_id": "alice", "claims": []string{"ops"}}}},
	})
	unauthorized := []map[string]string{
		{},
		{"Authorization": "Bearer wrong-token-0123456789abcdef"},
		{"Authorization": "Basic " + testToken},
		{"Authorization": "Bearer"},
		{"Authorization": "Bearer " + testToken + "x"},
	}
	var first string
	for _, h := range unauthorized {
		r := g.do(request{method: "GET", path: "/api/v1/daemon/status", header: h, noAuth: true})
		wantError(t, "unauthenticated "+h["Authorization"], r, 401, "unauthenticated", "unauthenticated")
		if r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("401 without WWW-Authenticate")
		}
		if first == "" {
			first = string(r.body)
		} else if string(r.body) != first {
			t.Errorf("401 bodies differ (%s vs %s): a reason leaks", r.body, first)
		}
	}
	if n := len(g.d.Requests()); n != 0 {
		t.Errorf("unauthenticated requests reached the daemon (%d)", n)
	}
	wantOK(t, "healthz without a token", g.do(request{method: "GET", path: "/healthz", noAuth: true}), nil)
	wantOK(t, "readyz without a token", g.do(request{method: "GET", path: "/readyz", noAuth: true}), nil)
	wantError(t, "openapi without a token", g.do(request{method: "GET", path: "/api/v1/openapi.json", noAuth: true}), 401, "", "unauthenticated")

	g.token = testToken
	var run struct {
		WorkflowID string `json:"workflow_id"`
	}
	wantOK(t, "run with the default token", g.do(request{method: "POST", path: "/api/v1/workflows/run", body: map[string]string{"task_id": "task:T-1"}}), &run)
	if a := g.d.ActorOf(run.WorkflowID); a != nil {
		t.Errorf("the default token has no actor, yet %s was attached", a)
	}
	g.token = aliceToken
	for _, rq := range []request{
		{method: "POST", path: "/api/v1/workflows/run", body: map[string]string{"task_id": "task:T-1"}},
		{method: "POST", path: "/api/v1/workflows/execute", body: map[string]string{"definition": "review"}},
	} {
		wantOK(t, rq.path+" as alice", g.do(rq), &run)
		var actor map[string]any
		if err := json.Unmarshal(g.d.ActorOf(run.WorkflowID), &actor); err != nil || actor["user_id"] != "alice" {
			t.Errorf("%s: actor %s, want alice", rq.path, g.d.ActorOf(run.WorkflowID))
		}
	}
	stderr := g.h.Stderr()
	for _, secret := range []string{testToken, aliceToken, "wrong-token-0123456789abcdef"} {
		if strings.Contains(stderr, secret) {
			t.Fatalf("a token appears in the plugin's stderr")
		}
	}
	if !strings.Contains(stderr, "transport started") {
		t.Errorf("debug log did not run (no 'transport started'), so the check above proves nothing:\n%s", stderr)
	}
}

// A token lets the transport bind beyond loopback; the Host guard then
// applies only to allowed_hosts, if any.
func TestNonLoopbackNeedsAToken(t *testing.T) {
	g := startGateway(t, setup{
		daemon:   &fakedaemon.Options{},
		bindAddr: "0.0.0.0:0",
		env:      map[string]string{"ANIMUS_HTTP_TOKEN": testToken},
	})
	g.token = testToken
	_, port, _ := net.SplitHostPort(g.addr)
	g.base = "http://127.0.0.1:" + port
	wantOK(t, "any Host on a non-loopback bind", g.do(request{method: "GET", path: "/api/v1/daemon/status", header: map[string]string{"Host": "animus.example.com"}}), nil)
}

// DNS-rebinding defence on loopback binds: only loopback names, loopback
// IPs and allowed_hosts pass the Host check.
func TestHostGuard(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}, config: map[string]any{"allowed_hosts": []string{"animus.internal"}}})
	_, port, _ := net.SplitHostPort(g.addr)
	cases := []struct {
		host string
		ok   bool
	}{
		{"localhost:" + port, true},
		{"127.0.0.1:" + port, true},
		{"[::1]:" + port, true},
		{"animus.internal", true},
		{"animus.internal:" + port, true},
		{"evil.example:" + port, false},
		{"localhost.evil.example", false},
		{"127.0.0.1.nip.io:" + port, false},
	}
	for _, c := range cases {
		r := g.do(request{method: "GET", path: "/api/v1/daemon/status", header: map[string]string{"Host": c.host}})
		if c.ok {
			wantOK(t, "Host "+c.host, r, nil)
		} else {
			wantError(t, "Host "+c.host, r, 403, "permission_denied", "forbidden_host")
		}
	}
}

// CORS allows exact origins only (the reference's prefix match admitted
// http://localhost.evil.com); preflights are answered without a token; a
// request from any other origin is refused.
func TestCORS(t *testing.T) {
	allowed := "http://localhost:5173"
	g := startGateway(t, setup{
		daemon: &fakedaemon.Options{},
		env:    map[string]string{"ANIMUS_HTTP_TOKEN": testToken},
		config: map[string]any{"cors": map[string]any{"allowed_origins": []string{allowed}}},
	})
	g.token = testToken
	pre := g.do(request{method: "OPTIONS", path: "/api/v1/workflows/run", noAuth: true,
		header: map[string]string{"Origin": allowed, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}})
	if pre.status != 204 || pre.header.Get("Access-Control-Allow-Origin") != allowed ||
		!strings.Contains(pre.header.Get("Access-Control-Allow-Headers"), "Authorization") ||
		!strings.Contains(pre.header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("preflight: %d %v", pre.status, pre.header)
	}
	r := g.do(request{method: "GET", path: "/api/v1/daemon/status", header: map[string]string{"Origin": allowed}})
	wantOK(t, "GET from the allowed origin", r, nil)
	if r.header.Get("Access-Control-Allow-Origin") != allowed || !strings.Contains(r.header.Get("Vary"), "Origin") {
		t.Errorf("allowed origin: headers %v", r.header)
	}
	for _, origin := range []string{"http://localhost.evil.com", "http://localhost:5173.evil.com", "https://localhost:5173", "http://localhost", "null"} {
		r := g.do(request{method: "GET", path: "/api/v1/daemon/status", header: map[string]string{"Origin": origin}})
		wantError(t, "origin "+origin, r, 403, "permission_denied", "forbidden_origin")
		if r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("origin %s got Access-Control-Allow-Origin", origin)
		}
		pre := g.do(request{method: "OPTIONS", path: "/api/v1/daemon/status", noAuth: true,
			header: map[string]string{"Origin": origin, "Access-Control-Request-Method": "GET"}})
		if pre.status != 403 || pre.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from %s: %d %v", origin, pre.status, pre.header)
		}
	}
	r = g.do(request{method: "GET", path: "/api/v1/daemon/status"})
	wantOK(t, "no Origin (curl)", r, nil)
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a request without Origin got CORS headers")
	}
}

// Bodies over max_body_bytes are 413 whether the length is declared or
// not; bodies must be JSON objects sent as application/json.
func TestBodyLimitAndShape(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}, config: map[string]any{"max_body_bytes": 1024}})
	big := `{"task_id":"` + strings.Repeat("x", 2000) + `"}`
	wantError(t, "declared oversize body", g.do(request{method: "POST", path: "/api/v1/queue/enqueue", body: big}), 413, "invalid_request", "payload_too_large")

	req, _ := http.NewRequest("POST", g.base+"/api/v1/queue/enqueue", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1 // chunked: the limit must still hold
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked oversize body: %d, want 413", resp.StatusCode)
	}
	r := g.do(request{method: "POST", path: "/api/v1/queue/enqueue", body: `{"task_id":"t"}`, header: map[string]string{"Content-Type": "text/plain"}})
	wantError(t, "text/plain body", r, 415, "invalid_request", "unsupported_media_type")
	wantError(t, "malformed JSON", g.do(request{method: "POST", path: "/api/v1/queue/enqueue", body: `{"task_id":`}), 400, "", "invalid_input")
	wantError(t, "array body", g.do(request{method: "POST", path: "/api/v1/queue/enqueue", body: `["t"]`}), 400, "", "invalid_input")
	if n := len(g.d.Requests()); n != 0 {
		t.Errorf("%d rejected bodies reached the daemon", n)
	}
	wantOK(t, "a body within the limit", g.do(request{method: "POST", path: "/api/v1/queue/enqueue", body: `{"task_id":"t"}`}), nil)
}

// A client that sends headers too slowly is cut off at
// read_header_timeout_ms (slowloris).
func TestReadHeaderTimeout(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}, config: map[string]any{"read_header_timeout_ms": 200}})
	conn, err := net.Dial("tcp", g.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: localhost\r\n")); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	var buf bytes.Buffer
	_, err = io.Copy(&buf, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server kept a half-sent request open for 5 s")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cut off after %v, want about 200 ms", d)
	}
}
