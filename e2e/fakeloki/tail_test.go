package fakeloki

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

type frame struct {
	Streams []struct {
		Stream map[string]string `json:"stream"`
		Values [][]string        `json:"values"`
	} `json:"streams"`
	DroppedEntries []droppedEntry `json:"dropped_entries"`
}

func dialTail(t *testing.T, ctx context.Context, s *Server, params url.Values, hdr http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	u := "ws" + strings.TrimPrefix(s.URL(), "http") + "/loki/api/v1/tail?" + params.Encode()
	return websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: hdr})
}

func readFrame(t *testing.T, ctx context.Context, c *websocket.Conn) (frame, string) {
	t.Helper()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return f, string(b)
}

func TestTail(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := newTestServer(t, Options{})
	lbl := map[string]string{"service_name": "animus", "level": "info"}
	pushJSON(t, s, jsonBody(lbl, []any{ns(base.Add(-2 * time.Minute)), "old"}, []any{ns(base.Add(-time.Minute)), "backlog"}))

	params := url.Values{"query": {`{service_name="animus"} |= "o"`}, "start": {ns(base.Add(-90 * time.Second))}, "limit": {"10"}}
	c, _, err := dialTail(t, ctx, s, params, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.CloseNow() }()

	f, raw := readFrame(t, ctx, c)
	if len(f.Streams) != 1 || len(f.Streams[0].Values) != 1 || f.Streams[0].Values[0][1] != "backlog" {
		t.Fatalf("replay frame %s", raw)
	}
	if !strings.Contains(raw, `"dropped_entries":null`) {
		t.Fatalf("frame shape %s", raw)
	}

	// A non-matching push is not sent; a matching one (with SM) is.
	pushJSON(t, s, jsonBody(lbl, []any{ns(base.Add(-time.Second)), "skip me"}))
	pushJSON(t, s, jsonBody(lbl, []any{ns(base), "hello", map[string]string{"animus_id": "x1"}}))
	f, raw = readFrame(t, ctx, c)
	if len(f.Streams) != 1 || f.Streams[0].Values[0][1] != "hello" || f.Streams[0].Values[0][0] != ns(base) {
		t.Fatalf("live frame %s", raw)
	}
	if f.Streams[0].Stream["animus_id"] != "x1" {
		t.Fatalf("structured metadata not in tail labels: %s", raw)
	}
}

func TestTailTenantAndErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := newTestServer(t, Options{RequireTenant: true})
	q := url.Values{"query": {`{app="a"}`}}

	if _, resp, err := dialTail(t, ctx, s, q, nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no tenant: %v %v", err, resp)
	}
	bad := url.Values{"query": {`{app="a"}`}, "delay_for": {"6"}}
	if _, resp, err := dialTail(t, ctx, s, bad, http.Header{"X-Scope-OrgID": {"t1"}}); err == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("delay_for: %v", err)
	}

	c, _, err := dialTail(t, ctx, s, url.Values{"query": {`{app="a"}`}, "delay_for": {"1"}}, http.Header{"X-Scope-OrgID": {"t1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.CloseNow() }()
	other := jsonBody(map[string]string{"app": "a"}, []any{ns(base), "for t2"})
	mine := jsonBody(map[string]string{"app": "a"}, []any{ns(base), "for t1"})
	pushJSON(t, s, other, withTenant("t2"))
	start := time.Now()
	pushJSON(t, s, mine, withTenant("t1"))
	f, raw := readFrame(t, ctx, c)
	if f.Streams[0].Values[0][1] != "for t1" {
		t.Fatalf("frame %s", raw)
	}
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("delay_for not applied: %v", d)
	}
}

func TestCloseEndsTail(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := dialTail(t, ctx, s, url.Values{"query": {`{app="a"}`}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.CloseNow() }()
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Close hung with an open tail")
	}
	if _, _, err := c.Read(ctx); err == nil {
		t.Fatal("tail still open after Close")
	}
}
