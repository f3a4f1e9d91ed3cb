package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/transport-http/internal/control"
)

// testToken is the bearer token of harnesses built with auth.
const testToken = "test-token-0123456789"

// harness is a Server behind a real HTTP listener on 127.0.0.1, with the
// fake daemon (or no daemon) at its control socket path.
type harness struct {
	t      *testing.T
	s      *Server
	d      *fakeDaemon // nil: nothing listens at the socket path
	url    string
	client *http.Client
	token  string // sent as Bearer by do unless the request says otherwise
}

// newHarness starts the server. Options default to small timeouts so the
// failure paths are quick.
func newHarness(t *testing.T, o Options, d *fakeDaemon) *harness {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "none.sock")
	if d != nil {
		sock = d.path
	}
	o.Pool = control.NewPool(sock, 2)
	if o.LogsIdle == 0 {
		o.LogsIdle = 200 * time.Millisecond
	}
	if o.ControlTimeout == 0 {
		o.ControlTimeout = 3 * time.Second
	}
	if o.Info.StartedAt.IsZero() {
		o.Info = Info{BoundAddr: "127.0.0.1:8080", StartedAt: time.Now().Add(-time.Minute), ProjectRoot: "/srv/project",
			Kinds: []string{"http", "rest", "sse"}, Auth: o.Auth != nil}
	}
	s := New(o)
	ts := httptest.NewServer(s.Handler())
	// Cleanups run last-in first-out: end the streams, then the listener
	// (which waits for handlers), then the pool.
	t.Cleanup(o.Pool.Close)
	t.Cleanup(ts.Close)
	t.Cleanup(s.Stop)
	h := &harness{t: t, s: s, d: d, url: ts.URL, client: ts.Client()}
	if o.Auth != nil {
		h.token = testToken
	}
	return h
}

// on is h reporting to t: for subtests, which must not fail their parent.
func (h *harness) on(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

// withAuth is an Options with one bearer token, optionally for an actor.
func withAuth(actor *Actor) Options {
	return Options{Auth: NewAuthenticator([]Credential{{Token: testToken, Actor: actor}})}
}

// exchange is one request as sent and its response as received.
type exchange struct {
	method, target string
	reqHeader      http.Header
	reqBody        []byte
	status         int
	header         http.Header
	body           []byte
}

// request describes one request to send.
type request struct {
	method, target string
	body           string
	header         map[string]string // "Host" sets the Host header
	noAuth         bool
	contentLength  int64 // overrides the body's length when set
}

func (h *harness) do(rq request) exchange {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return h.doCtx(ctx, rq)
}

func (h *harness) doCtx(ctx context.Context, rq request) exchange {
	h.t.Helper()
	var body io.Reader
	if rq.body != "" {
		body = strings.NewReader(rq.body)
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, h.url+rq.target, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if rq.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if rq.contentLength != 0 {
		req.ContentLength = rq.contentLength
	}
	if h.token != "" && !rq.noAuth {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	for k, v := range rq.header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", rq.method, rq.target, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("%s %s: reading the body: %v", rq.method, rq.target, err)
	}
	return exchange{method: rq.method, target: rq.target, reqHeader: req.Header, reqBody: []byte(rq.body),
		status: resp.StatusCode, header: resp.Header, body: raw}
}

// envelope decodes an envelope body; the test fails if it is not one.
func (x exchange) envelope(t *testing.T) (ok bool, data json.RawMessage, e *apiError) {
	t.Helper()
	var env struct {
		OK    *bool           `json:"ok"`
		Data  json.RawMessage `json:"data"`
		Error *apiError       `json:"error"`
	}
	if err := json.Unmarshal(x.body, &env); err != nil || env.OK == nil {
		t.Fatalf("%s %s: %d, not an envelope: %s", x.method, x.target, x.status, x.body)
	}
	return *env.OK, env.Data, env.Error
}

// wantErr checks an error envelope's status and code.
func (x exchange) wantErr(t *testing.T, status int, code string) *apiError {
	t.Helper()
	ok, _, e := x.envelope(t)
	if ok || e == nil || x.status != status || (code != "" && e.Code != code) {
		t.Fatalf("%s %s: got %d %s, want %d %s", x.method, x.target, x.status, x.body, status, code)
	}
	return e
}

// wantData checks a success envelope and decodes its data into v.
func (x exchange) wantData(t *testing.T, v any) {
	t.Helper()
	ok, data, _ := x.envelope(t)
	if !ok || x.status != http.StatusOK {
		t.Fatalf("%s %s: got %d %s, want 200 ok", x.method, x.target, x.status, x.body)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s %s: data %s: %v", x.method, x.target, data, err)
		}
	}
}

// sseEvent is one event of a text/event-stream body.
type sseEvent struct {
	id, event, data string
}

// parseSSE splits a finished stream into its events and counts its
// comments.
func parseSSE(body []byte) (events []sseEvent, comments int) {
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur != (sseEvent{}) {
				events = append(events, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, ":"):
			comments++
		case strings.HasPrefix(line, "id: "):
			cur.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return events, comments
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return bytes.Equal(gb, wb)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
