package inbound

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
)

const secret = "8f742231b10e8888abcd99yyyzzz85a5"

// sign is Slack's request signature over body at Unix time ts.
func sign(secret string, ts int64, body string) string {
	_, sig := fakeslack.Sign(secret, time.Unix(ts, 0), []byte(body))
	return sig
}

type sinkRecorder struct {
	mu  sync.Mutex
	got []Delivery
}

func (s *sinkRecorder) sink(ctx context.Context, d Delivery) error {
	s.mu.Lock()
	s.got = append(s.got, d)
	s.mu.Unlock()
	return nil
}

func (s *sinkRecorder) all() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.got...)
}

// startHTTP serves h on a real 127.0.0.1 port and returns the URL.
func startHTTP(t *testing.T, h *HTTP) string {
	t.Helper()
	ln, err := h.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}

const callback = `{"type":"event_callback","team_id":"T1","event_id":"Ev1","event":{"type":"app_mention","channel":"C1","user":"U1","text":"hi","ts":"1.1"}}`

func TestEventsAPIRequests(t *testing.T) {
	now := time.Now().Unix()
	cases := []struct {
		name       string
		method     string
		path       string
		body       string
		ts         int64
		sig        string // "" = sign body with secret at ts
		headers    map[string]string
		wantStatus int
		wantBody   string
		delivered  bool
	}{
		{name: "valid event", body: callback, ts: now, wantStatus: 200, delivered: true},
		{name: "retry header", body: callback, ts: now, headers: map[string]string{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"},
			wantStatus: 200, delivered: true},
		{name: "url_verification", body: `{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`,
			ts: now, wantStatus: 200, wantBody: `{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}`},
		{name: "wrong secret", body: callback, ts: now, sig: sign("not-the-secret", now, callback), wantStatus: 401},
		{name: "stale timestamp", body: callback, ts: now - 6*60, wantStatus: 401},
		{name: "future timestamp", body: callback, ts: now + 6*60, wantStatus: 401},
		{name: "tampered body", body: strings.Replace(callback, `"hi"`, `"rm -rf"`, 1), ts: now, sig: sign(secret, now, callback), wantStatus: 401},
		{name: "no signature", body: callback, ts: now, sig: "-", wantStatus: 401},
		{name: "malformed signature", body: callback, ts: now, sig: "v0=zz", wantStatus: 401},
		{name: "signed but not JSON", body: `not json`, ts: now, wantStatus: 400},
		{name: "other envelope type", body: `{"type":"app_rate_limited","team_id":"T1","minute_rate_limited":1}`, ts: now, wantStatus: 200},
		{name: "wrong path", path: "/other", body: callback, ts: now, wantStatus: 404},
		{name: "GET", method: "GET", body: "", ts: now, wantStatus: 405},
		{name: "oversized body", body: `{"type":"event_callback","pad":"` + strings.Repeat("x", 2048) + `"}`, ts: now, wantStatus: 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &sinkRecorder{}
			h := &HTTP{Addr: "127.0.0.1:0", Path: "/slack/events", Secret: secret, MaxBody: 1024,
				Logger: slog.New(slog.DiscardHandler), Status: &Status{}, Sink: rec.sink}
			base := startHTTP(t, h)
			method, path := tc.method, tc.path
			if method == "" {
				method = "POST"
			}
			if path == "" {
				path = "/slack/events"
			}
			req, _ := http.NewRequest(method, base+path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(tc.ts, 10))
			switch tc.sig {
			case "":
				req.Header.Set("X-Slack-Signature", sign(secret, tc.ts, tc.body))
			case "-":
			default:
				req.Header.Set("X-Slack-Signature", tc.sig)
			}
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, b, tc.wantStatus)
			}
			if tc.wantBody != "" && strings.TrimSpace(string(b)) != tc.wantBody {
				t.Fatalf("body %s, want %s", b, tc.wantBody)
			}
			got := rec.all()
			if !tc.delivered {
				if len(got) != 0 {
					t.Fatalf("delivered %d events for a rejected or non-event request", len(got))
				}
				return
			}
			if len(got) != 1 || string(got[0].Payload) != tc.body || got[0].Transport != "http" {
				t.Fatalf("deliveries = %+v", got)
			}
			if tc.headers["X-Slack-Retry-Num"] == "1" && (got[0].Retry != 1 || got[0].RetryReason != "http_timeout") {
				t.Fatalf("retry not recorded: %+v", got[0])
			}
		})
	}
}

// TestAnswersBeforeDelivering: the 200 reaches Slack while the sink is
// still blocked (a slow host), so Slack does not retry.
func TestAnswersBeforeDelivering(t *testing.T) {
	release := make(chan struct{})
	delivered := make(chan struct{})
	h := &HTTP{Addr: "127.0.0.1:0", Path: "/e", Secret: secret, Logger: slog.New(slog.DiscardHandler), Status: &Status{},
		Sink: func(ctx context.Context, d Delivery) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			close(delivered)
			return nil
		}}
	base := startHTTP(t, h)
	defer close(release)
	req, err := fakeslack.EventRequest(base+"/e", secret, time.Now(), []byte(callback))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("the 200 waited for delivery: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	select {
	case <-delivered:
		t.Fatal("delivered before the sink was released")
	default:
	}
	if p := h.Status.Get().Phase; p != PhaseListening {
		t.Fatalf("phase %v, want listening", p)
	}
}

func TestListenAddressInUse(t *testing.T) {
	h := &HTTP{Addr: "127.0.0.1:0", Path: "/e", Secret: secret, Logger: slog.New(slog.DiscardHandler), Status: &Status{}}
	ln, err := h.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	h2 := &HTTP{Addr: ln.Addr().String()}
	if ln2, err := h2.Listen(); err == nil {
		ln2.Close()
		t.Fatal("second listen on a bound port succeeded")
	}
}
