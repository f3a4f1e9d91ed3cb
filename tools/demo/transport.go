package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// transportScript walks animus-transport-http through what `animus web
// serve` does with it, with a fake control socket behind it: start without
// dialling, REST with honest statuses, the security guards, an SSE stream,
// the daemon going away, and a draining shutdown.
func transportScript() Script {
	return Script{
		Binary: "animus-transport-http",
		Kind:   "transport_backend",
		Title:  "animus-transport-http: the daemon over HTTP and SSE",
		Run:    runTransport,
	}
}

func runTransport(ctx context.Context, d *Demo) (string, error) {
	dir, err := os.MkdirTemp("", "demo-th-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "control.sock")

	d.Step("Spawn as the daemon does and handshake; health/check before transport/start")
	h, err := d.Spawn(ctx, "animus-transport-http")
	if err != nil {
		return "", err
	}
	if _, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}); err != nil {
		return "", err
	}
	d.Frames(h)
	resp, err := d.Call(ctx, h, "health/check", nil)
	if err != nil {
		return "", err
	}
	if err := d.Expect(strings.Contains(string(resp.Result), `"degraded"`), "degraded: nothing is served yet"); err != nil {
		return "", err
	}

	d.Step("A fake daemon listens on %s; transport/start binds port 0 and must not dial it", filepath.Base(socket))
	daemon, err := fakedaemon.Start(fakedaemon.Options{Path: socket})
	if err != nil {
		return "", err
	}
	defer daemon.Close()
	resp, err = d.Call(ctx, h, "transport/start", map[string]string{"control_socket_path": socket, "project_root": dir, "bind_addr": "127.0.0.1:0"})
	if err != nil {
		return "", err
	}
	var info struct {
		BoundAddr string `json:"bound_addr"`
	}
	if resp.Error != nil || json.Unmarshal(resp.Result, &info) != nil {
		return "", fmt.Errorf("transport/start: %s", resp.Raw)
	}
	if err := d.Expect(daemon.Connections() == 0, "listening on %s; the daemon saw %d connections", info.BoundAddr, daemon.Connections()); err != nil {
		return "", err
	}
	base := "http://" + info.BoundAddr
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()

	d.Step("REST: the envelope, and daemon errors with the status their category means")
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"GET", "/api/v1/daemon/status", "", 200},
		{"GET", "/api/v1/workflows/wf-404", "", 404},
		{"POST", "/api/v1/workflows/wf-2/cancel", `{"reason":"demo"}`, 409},
		{"POST", "/api/v1/daemon/stop", "", 501},
		{"GET", "/api/v1/workflows?status=stuck", "", 400},
	} {
		status, body, err := demoHTTP(ctx, client, c.method, base+c.path, c.body, nil)
		if err != nil {
			return "", err
		}
		if err := d.Expect(status == c.status, "%s %s → %d %s", c.method, c.path, status, shortJSON(body, 110)); err != nil {
			return "", err
		}
	}

	d.Step("Security: a rebinding Host and a foreign Origin are refused (no token: loopback only)")
	for _, hdr := range [][2]string{{"Host", "evil.example"}, {"Origin", "http://localhost.evil.com"}} {
		status, body, err := demoHTTP(ctx, client, "GET", base+"/api/v1/daemon/status", "", map[string]string{hdr[0]: hdr[1]})
		if err != nil {
			return "", err
		}
		if err := d.Expect(status == 403, "%s: %s → %d %s", hdr[0], hdr[1], status, shortJSON(body, 100)); err != nil {
			return "", err
		}
	}

	d.Step("SSE: GET /api/v1/daemon/events relays daemon/event with a resumable id")
	sctx, cancelSSE := context.WithCancel(ctx)
	defer cancelSSE()
	req, _ := http.NewRequestWithContext(sctx, "GET", base+"/api/v1/daemon/events", nil)
	sresp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer sresp.Body.Close()
	events := bufio.NewReader(sresp.Body)
	if err := waitDemo(ctx, func() bool { return daemon.ActiveStreams() == 1 }); err != nil {
		return "", err
	}
	daemon.EmitEvent(fakedaemon.Event{Kind: "workflow_started", Payload: json.RawMessage(`{"workflow_id":"wf-1"}`)})
	ev, err := readEvent(events)
	if err != nil {
		return "", err
	}
	if err := d.Expect(strings.Contains(ev, "event: daemon-event") && strings.Contains(ev, "id: "), "%s", strings.ReplaceAll(ev, "\n", " ⏎ ")); err != nil {
		return "", err
	}

	d.Step("transport/shutdown with the stream open: event end, port released before the reply")
	resp, err = d.Call(ctx, h, "transport/shutdown", nil)
	if err != nil {
		return "", err
	}
	ln, bindErr := net.Listen("tcp", info.BoundAddr)
	if bindErr == nil {
		ln.Close()
	}
	ev, _ = readEvent(events)
	if err := d.Expect(resp.Error == nil && bindErr == nil && strings.Contains(ev, "event: end"),
		"%s; %s free; stream got %q", resp.Result, info.BoundAddr, strings.ReplaceAll(ev, "\n", " ⏎ ")); err != nil {
		return "", err
	}

	d.Step("The daemon's transport ladder: transport/shutdown, shutdown, exit")
	rep, err := h.Shutdown(ctx, fakehost.LadderTransport)
	d.Frames(h)
	if err != nil {
		return "", err
	}
	if err := d.Expect(rep.ExitedByItself && rep.ExitCode == 0, "exited by itself with code %d in %v", rep.ExitCode, rep.Elapsed.Round(time.Millisecond)); err != nil {
		return "", err
	}
	return fmt.Sprintf("start without dialling, 5 REST statuses, 2 guards, SSE with end on shutdown, clean exit; daemon saw %d requests", len(daemon.Requests())), nil
}

func demoHTTP(ctx context.Context, c *http.Client, method, url, body string, hdr map[string]string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// readEvent reads one SSE event (skipping comments).
func readEvent(r *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return b.String(), err
		}
		switch {
		case strings.HasPrefix(line, ":") || strings.HasPrefix(line, "retry:"):
		case line == "\n":
			if b.Len() > 0 {
				return strings.TrimSpace(b.String()), nil
			}
		default:
			b.WriteString(line)
		}
	}
}

func waitDemo(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}
