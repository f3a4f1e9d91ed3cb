package fakeloki

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const (
	pushPath  = "/loki/api/v1/push"
	queryPath = "/loki/api/v1/query_range"
	readyPath = "/ready"
)

// hit sends the request a client would send to path (a valid push, a
// query, a plain GET otherwise) and returns the answer.
func hit(t *testing.T, s *Server, path string) (int, string, http.Header) {
	t.Helper()
	var req *http.Request
	switch path {
	case pushPath:
		req, _ = http.NewRequest(http.MethodPost, s.URL()+path, strings.NewReader(string(jsonBody(map[string]string{"app": "a"}, []any{ns(base.Add(-time.Minute)), "x"}))))
		req.Header.Set("Content-Type", "application/json")
	case queryPath:
		req, _ = http.NewRequest(http.MethodGet, s.URL()+path+"?"+rangeOf(`{app="a"}`).Encode(), nil)
	default:
		req, _ = http.NewRequest(http.MethodGet, s.URL()+path, nil)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestFailPath: path faults answer their status and body the given number
// of times, in the order added, only on their path; ClearFaults ends them.
func TestFailPath(t *testing.T) {
	type step struct {
		path string
		code int
		body string // prefix of the answer, "" to skip
	}
	cases := []struct {
		name  string
		setup func(s *Server)
		steps []step
	}{
		{"n times, then served", func(s *Server) { s.FailPath(pushPath, 2, 503, "Ingester not ready") },
			[]step{{readyPath, 200, "ready"}, {pushPath, 503, "Ingester not ready\n"}, {pushPath, 503, ""}, {pushPath, 204, ""}}},
		{"queued in order", func(s *Server) { s.FailPath(readyPath, 1, 404, "a"); s.FailPath(readyPath, 1, 418, "b") },
			[]step{{readyPath, 404, "a"}, {readyPath, 418, "b"}, {readyPath, 200, "ready"}}},
		{"every request until cleared", func(s *Server) { s.FailPath(queryPath, -1, 502, "bad gateway") },
			[]step{{queryPath, 502, "bad gateway"}, {queryPath, 502, "bad gateway"}, {"clear", 0, ""}, {queryPath, 200, `{"data":{"result":[]`}}},
		{"empty body is Loki's text", func(s *Server) { s.FailPath(pushPath, 1, 429, ""); s.FailPath(pushPath, 1, 500, "") },
			[]step{{pushPath, 429, RateLimitedMessage}, {pushPath, 500, "Internal Server Error"}, {pushPath, 204, ""}}},
		{"zero times is nothing", func(s *Server) { s.FailPath(readyPath, 0, 500, "x") },
			[]step{{readyPath, 200, "ready"}}},
		{"ClearFaults ends FailNext too", func(s *Server) { s.FailNext(5, 500) },
			[]step{{readyPath, 500, ""}, {"clear", 0, ""}, {readyPath, 200, "ready"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, Options{})
			tc.setup(s)
			for i, st := range tc.steps {
				if st.path == "clear" {
					s.ClearFaults()
					continue
				}
				code, body, hdr := hit(t, s, st.path)
				if code != st.code || !strings.HasPrefix(body, st.body) {
					t.Fatalf("step %d %s: %d %q, want %d %q…", i, st.path, code, body, st.code, st.body)
				}
				if ra := hdr.Get("Retry-After"); (code == 429) != (ra == "1") {
					t.Fatalf("step %d: %d with Retry-After %q", i, code, ra)
				}
			}
		})
	}
}

// TestHangPath: a hanging request gets no answer until its client gives
// up, counts as received, and does not hold up Close.
func TestHangPath(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.HangPath(readyPath, 1)
	client := &http.Client{Timeout: 100 * time.Millisecond}
	if resp, err := client.Get(s.URL() + readyPath); err == nil {
		_ = resp.Body.Close()
		t.Fatalf("hanging request answered %d", resp.StatusCode)
	}
	if code, _, _ := hit(t, s, readyPath); code != 200 || s.RequestsTo(readyPath) != 2 {
		t.Fatalf("after the hang: %d, %d requests", code, s.RequestsTo(readyPath))
	}

	s.HangPath(readyPath, -1)
	go func() {
		if resp, err := http.Get(s.URL() + readyPath); err == nil {
			_ = resp.Body.Close()
		}
	}()
	waitFor(t, "the hanging request", func() bool { return s.RequestsTo(readyPath) == 3 })
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for a hanging request")
	}
}

// TestHoldNext: a held request is answered normally once released, and
// not served at all when its client gave up first.
func TestHoldNext(t *testing.T) {
	s := newTestServer(t, Options{})
	release := s.HoldNext(readyPath)
	done := make(chan int, 1)
	go func() {
		resp, err := http.Get(s.URL() + readyPath)
		if err != nil {
			done <- 0
			return
		}
		_ = resp.Body.Close()
		done <- resp.StatusCode
	}()
	waitFor(t, "the held request", func() bool { return s.Held(readyPath) == 1 })
	select {
	case code := <-done:
		t.Fatalf("held request answered %d before release", code)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	release() // harmless
	if code := <-done; code != 200 {
		t.Fatalf("released request answered %d", code)
	}

	// A tail whose client gave up while held is never opened. (A request
	// with an unread body would not notice its client leaving: net/http
	// watches the connection only once the body is read.)
	release = s.HoldNext("/loki/api/v1/tail")
	ctx, cancel := context.WithCancel(context.Background())
	dialed := make(chan error, 1)
	go func() {
		_, _, err := dialTail(t, ctx, s, url.Values{"query": {`{app="a"}`}}, nil)
		dialed <- err
	}()
	waitFor(t, "the held tail", func() bool { return s.Held("/loki/api/v1/tail") == 1 })
	cancel()
	if err := <-dialed; err == nil {
		t.Fatal("dial succeeded while held")
	}
	// The hold ends when the server sees the client leave; the request is
	// then done with, unserved, and a late release changes nothing.
	waitFor(t, "the abandoned tail to be let go", func() bool { return s.Held("/loki/api/v1/tail") == 0 })
	release()
	if n, starts := s.OpenTails(), s.TailStarts(); n != 0 || len(starts) != 0 {
		t.Fatalf("abandoned tail served: %d open, starts %v", n, starts)
	}
}

// TestHoldIngestion: HoldIngestion and HideStored keep entries out of
// query_range until CatchUp, which reveals them all (lagged ones too);
// neither affects entries pushed once they are over.
func TestHoldIngestion(t *testing.T) {
	push := func(t *testing.T, s *Server, line string) {
		t.Helper()
		if code, body := pushJSON(t, s, jsonBody(map[string]string{"app": "a"}, []any{ns(base.Add(-time.Minute)), line})); code != http.StatusNoContent {
			t.Fatalf("push %d %s", code, body)
		}
	}
	visible := func(t *testing.T, s *Server) string {
		t.Helper()
		_, _, q := queryRange(t, s, rangeOf(`{app="a"}`, "direction", "forward"))
		return strings.Join(q.lines(), ",")
	}
	cases := []struct {
		name string
		run  func(t *testing.T, s *Server) []string // what query_range showed at each step
		want []string
	}{
		{"held until caught up", func(t *testing.T, s *Server) []string {
			s.HoldIngestion()
			push(t, s, "a")
			seen := []string{visible(t, s)}
			s.CatchUp()
			seen = append(seen, visible(t, s))
			push(t, s, "b")
			return append(seen, visible(t, s))
		}, []string{"", "a", "a,b"}},
		{"stored entries hidden", func(t *testing.T, s *Server) []string {
			push(t, s, "a")
			s.HideStored()
			push(t, s, "b")
			seen := []string{visible(t, s)}
			s.CatchUp()
			return append(seen, visible(t, s))
		}, []string{"b", "a,b"}},
		{"catch up ends a lag", func(t *testing.T, s *Server) []string {
			s.SetIngestionLag(time.Hour)
			push(t, s, "a")
			seen := []string{visible(t, s)}
			s.CatchUp()
			return append(seen, visible(t, s))
		}, []string{"", "a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.run(t, newTestServer(t, Options{})); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("query_range showed %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDropTailEntries: open tails report the dropped entries in
// dropped_entries instead of sending them, then go on; entries pushed
// while no tail is open do not use up the count.
func TestDropTailEntries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := newTestServer(t, Options{})
	lbl := map[string]string{"app": "a"}
	s.DropTailEntries(1)
	pushJSON(t, s, jsonBody(lbl, []any{ns(base.Add(-time.Minute)), "untailed"}))
	c, _, err := dialTail(t, ctx, s, url.Values{"query": {`{app="a"}`}, "start": {ns(base.Add(-30 * time.Second))}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.CloseNow() }()
	waitFor(t, "the tail", func() bool { return s.OpenTails() == 1 })

	pushJSON(t, s, jsonBody(lbl, []any{ns(base.Add(-2 * time.Second)), "lost"}))
	f, raw := readFrame(t, ctx, c)
	if len(f.Streams) != 0 || len(f.DroppedEntries) != 1 || f.DroppedEntries[0].Timestamp != ns(base.Add(-2*time.Second)) ||
		f.DroppedEntries[0].Labels["app"] != "a" {
		t.Fatalf("drop frame %s", raw)
	}
	pushJSON(t, s, jsonBody(lbl, []any{ns(base.Add(-time.Second)), "kept"}))
	if f, raw = readFrame(t, ctx, c); len(f.Streams) != 1 || f.Streams[0].Values[0][1] != "kept" || f.DroppedEntries != nil {
		t.Fatalf("frame after the drop %s", raw)
	}
	if n := s.Entries("fake"); n != 3 {
		t.Fatalf("%d entries stored; dropping must not lose them", n)
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
