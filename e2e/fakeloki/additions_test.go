package fakeloki

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestIngestionLag: entries pushed under SetIngestionLag stay out of
// query_range until the lag has passed.
func TestIngestionLag(t *testing.T) {
	s := newTestServer(t, Options{})
	s.SetIngestionLag(200 * time.Millisecond)
	if code, body := pushJSON(t, s, jsonBody(map[string]string{"app": "a"}, []any{ns(base.Add(-time.Minute)), "late"})); code != http.StatusNoContent {
		t.Fatalf("push %d %s", code, body)
	}
	if _, _, q := queryRange(t, s, rangeOf(`{app="a"}`)); len(q.lines()) != 0 {
		t.Fatalf("visible at once: %v", q.lines())
	}
	time.Sleep(250 * time.Millisecond)
	if _, _, q := queryRange(t, s, rangeOf(`{app="a"}`)); len(q.lines()) != 1 {
		t.Fatalf("not visible after the lag: %v", q.lines())
	}
}

// TestDisallowStructuredMetadata: entries with structured metadata are
// refused with Loki's message; plain entries are stored.
func TestDisallowStructuredMetadata(t *testing.T) {
	s := newTestServer(t, Options{DisallowStructuredMetadata: true})
	code, body := pushJSON(t, s, jsonBody(map[string]string{"app": "a"}, []any{ns(base.Add(-time.Minute)), "x", map[string]string{"k": "v"}}))
	if code != http.StatusBadRequest || !strings.Contains(body, "includes structured metadata, but this feature is disallowed") {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := pushJSON(t, s, jsonBody(map[string]string{"app": "a"}, []any{ns(base.Add(-time.Minute)), "y"})); code != http.StatusNoContent {
		t.Fatalf("plain entry: %d %s", code, body)
	}
}

// TestCloseTails ends open tails normally while the server keeps serving.
func TestCloseTails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := New(t, Options{})
	c, _, err := dialTail(t, ctx, s, url.Values{"query": {`{app="a"}`}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.CloseNow() }()
	for s.OpenTails() != 1 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if n := s.CloseTails(); n != 1 {
		t.Fatalf("CloseTails closed %d", n)
	}
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("read after CloseTails: %v", err)
	}
	c2, _, err := dialTail(t, ctx, s, url.Values{"query": {`{app="a"}`}}, nil)
	if err != nil {
		t.Fatalf("reconnect: %v", err)
	}
	_ = c2.CloseNow()
}
