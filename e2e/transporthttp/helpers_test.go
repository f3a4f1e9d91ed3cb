package transporthttp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

const binary = "animus-transport-http"

// testToken is long enough for the plugin's 16-character minimum.
const testToken = "e2e-token-0123456789abcdef"

// setup describes one plugin process, its transport/start and its daemon.
type setup struct {
	daemon   *fakedaemon.Options // nil: no daemon listening at the socket path
	config   map[string]any      // TransportConfig.config
	bindAddr string              // default 127.0.0.1:0
	env      map[string]string   // the daemon's environment overlay (declared names pass)
	extra    map[string]string   // always passed (names the plugin does not declare)
}

// gateway is a started transport: the plugin process, the fake daemon and
// an HTTP client aimed at the bound address.
type gateway struct {
	t      *testing.T
	h      *fakehost.Host
	d      *fakedaemon.Daemon // nil without a daemon
	socket string
	base   string // http://<bound_addr>
	addr   string
	info   json.RawMessage
	client *http.Client
	token  string // sent as Bearer by do() when set
}

// newHost spawns the plugin as the daemon's transport supervisor does:
// the generic host's allowlist and handshake, cwd = a fresh project root.
func newHost(t *testing.T, s setup) *fakehost.Host {
	t.Helper()
	return e2etest.Spawn(t, binary, e2etest.Options{Env: s.env, Extra: s.extra})
}

// socketDir is a short temp dir: Unix socket paths are limited to 107 bytes
// and t.TempDir() paths can be long.
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "th-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startGateway spawns the plugin, starts the fake daemon (unless s.daemon is
// nil) and sends transport/start; the test fails if start fails. Cleanup
// stops the plugin with the daemon's transport ladder.
func startGateway(t *testing.T, s setup) *gateway {
	t.Helper()
	g := &gateway{t: t, socket: filepath.Join(socketDir(t), "control.sock")}
	if s.daemon != nil {
		o := *s.daemon
		o.Path = g.socket
		g.d = fakedaemon.New(t, o)
	}
	g.h = newHost(t, s)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		rep, err := g.h.Shutdown(ctx, fakehost.LadderTransport)
		if err != nil || !rep.ExitedByItself || rep.ExitCode != 0 {
			t.Errorf("transport ladder: err %v, report %+v", err, rep)
		}
	})
	resp := g.startRaw(s)
	if resp.Error != nil {
		t.Fatalf("transport/start: %s (code %d, category %s)", resp.Error.Message, resp.Error.Code, resp.Error.Category())
	}
	var info struct {
		BoundAddr string `json:"bound_addr"`
	}
	if err := json.Unmarshal(resp.Result, &info); err != nil {
		t.Fatalf("transport/start result %s: %v", resp.Result, err)
	}
	g.addr, g.base, g.info = info.BoundAddr, "http://"+info.BoundAddr, resp.Result
	g.client = &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(g.client.CloseIdleConnections)
	return g
}

func (g *gateway) startRaw(s setup) *fakehost.Response {
	g.t.Helper()
	bind := s.bindAddr
	if bind == "" {
		bind = "127.0.0.1:0"
	}
	params := map[string]any{"control_socket_path": g.socket, "project_root": g.h.ProjectRoot(), "bind_addr": bind}
	if s.config != nil {
		params["config"] = s.config
	}
	return g.call("transport/start", params)
}

func (g *gateway) call(method string, params any) *fakehost.Response {
	g.t.Helper()
	return e2etest.Request(g.t, g.h, method, params)
}

// envelope is the transport's response body.
type envelope struct {
	OK    bool            `json:"ok"`
	Data  json.RawMessage `json:"data"`
	Error *struct {
		Category string `json:"category"`
		Code     string `json:"code"`
		Message  string `json:"message"`
		RPCCode  int    `json:"rpc_code"`
	} `json:"error"`
}

// reply is one HTTP exchange's outcome.
type reply struct {
	status int
	header http.Header
	body   []byte
	env    envelope
}

// request describes one HTTP request; body is JSON-encoded unless it is a
// string or []byte (sent as is).
type request struct {
	method string
	path   string
	body   any
	header map[string]string
	noAuth bool
}

func (g *gateway) do(rq request) reply {
	g.t.Helper()
	var body io.Reader
	switch b := rq.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			g.t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(rq.method, g.base+rq.path, body)
	if err != nil {
		g.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if g.token != "" && !rq.noAuth {
		req.Header.Set("Authorization", "Bearer "+g.token)
	}
	for k, v := range rq.header {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", rq.method, rq.path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		g.t.Fatalf("%s %s: reading body: %v", rq.method, rq.path, err)
	}
	r := reply{status: resp.StatusCode, header: resp.Header, body: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.env); err != nil {
			g.t.Fatalf("%s %s: body is not the envelope: %v\n%s", rq.method, rq.path, err, raw)
		}
	}
	return r
}

func (g *gateway) get(path string) reply { return g.do(request{method: http.MethodGet, path: path}) }

// wantError checks an error envelope.
func wantError(t *testing.T, what string, r reply, status int, category, code string) {
	t.Helper()
	if r.status != status || r.env.OK || r.env.Error == nil ||
		(category != "" && r.env.Error.Category != category) || (code != "" && r.env.Error.Code != code) {
		t.Fatalf("%s: got %d %s, want %d category %q code %q", what, r.status, r.body, status, category, code)
	}
}

// wantOK checks a success envelope and decodes data into v (if non-nil).
func wantOK(t *testing.T, what string, r reply, v any) {
	t.Helper()
	if r.status != http.StatusOK || !r.env.OK {
		t.Fatalf("%s: got %d %s, want 200 ok", what, r.status, r.body)
	}
	if v != nil {
		if err := json.Unmarshal(r.env.Data, v); err != nil {
			t.Fatalf("%s: data %s: %v", what, r.env.Data, err)
		}
	}
}

// sse is an open event stream.
type sse struct {
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

// sseEvent is one parsed event (comments are skipped; Comments counts
// them).
type sseEvent struct {
	ID, Event, Data string
}

// openSSE opens an event stream and checks it answered 200 text/event-stream.
func (g *gateway) openSSE(path string, header map[string]string) *sse {
	g.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.base+path, nil)
	if err != nil {
		g.t.Fatal(err)
	}
	if g.token != "" {
		req.Header.Set("Authorization", "Bearer "+g.token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		cancel()
		g.t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		g.t.Fatalf("GET %s: %d %s %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s := &sse{resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	g.t.Cleanup(s.close)
	return s
}

func (s *sse) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next reads the next event, skipping comments; comments reports how many
// comment lines were skipped. It fails after timeout.
func (s *sse) next(t *testing.T, timeout time.Duration) (ev sseEvent, comments int) {
	t.Helper()
	type result struct {
		ev       sseEvent
		comments int
		err      error
	}
	done := make(chan result, 1)
	go func() {
		var ev sseEvent
		n := 0
		for {
			line, err := s.r.ReadString('\n')
			if err != nil {
				done <- result{err: err}
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.Event != "" || ev.Data != "" {
					done <- result{ev: ev, comments: n}
					return
				}
			case strings.HasPrefix(line, ":"):
				n++
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.Event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.Data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("sse: stream ended: %v", r.err)
		}
		return r.ev, r.comments
	case <-time.After(timeout):
		s.close()
		t.Fatalf("sse: no event within %v", timeout)
	}
	return sseEvent{}, 0
}

// waitEOF expects the server to end the response.
func (s *sse) waitEOF(t *testing.T, timeout time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, s.r)
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		t.Fatalf("sse: stream still open after %v", timeout)
	}
}
