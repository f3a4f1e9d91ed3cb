package delivery

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/webhooksig"
)

// captured is one request a test receiver saw.
type captured struct {
	header http.Header
	body   []byte
	path   string
}

type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []captured
}

func newReceiver(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, captured{header: r.Header.Clone(), body: b, path: r.URL.Path})
		rc.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []captured {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]captured(nil), rc.reqs...)
}

func target(t *testing.T, raw string) *config.Target {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return &config.Target{URL: u, Headers: http.Header{}}
}

func request(conn *config.Connector, tgt *config.Target) Request {
	return Request{DeliveryID: "d-1", EventID: "e-1", Attempt: 3, Body: []byte(`{"schema":"x"}`), Connector: conn, Target: tgt}
}

// noSecrets is a redaction function with nothing to redact.
func noSecrets(s string) string { return s }

func TestClassifyStatus(t *testing.T) {
	cases := []struct {
		status     int
		retryAfter string
		want       Outcome
		wantAfter  time.Duration
	}{
		{200, "", Delivered, 0},
		{204, "", Delivered, 0},
		{408, "", Transient, 0},
		{425, "", Transient, 0},
		{429, "7", Transient, 7 * time.Second},
		{429, "", Transient, 0},
		{500, "", Transient, 0},
		{502, "", Transient, 0},
		{503, "2", Transient, 2 * time.Second},
		{504, "9", Transient, 0}, // Retry-After is honoured on 429 and 503 only
		{400, "", Permanent, 0},
		{401, "", Permanent, 0},
		{404, "", Permanent, 0},
		{410, "", Permanent, 0},
		{304, "", Permanent, 0},
	}
	s := NewSender("1.2.3", nil)
	for _, c := range cases {
		t.Run(strconv.Itoa(c.status), func(t *testing.T) {
			rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				if c.retryAfter != "" {
					w.Header().Set("Retry-After", c.retryAfter)
				}
				w.WriteHeader(c.status)
				io.WriteString(w, "receiver says no")
			})
			conn := &config.Connector{ID: "c", Type: config.TypeWebhook, Signature: config.SignatureStandard}
			res := s.Send(context.Background(), request(conn, target(t, rc.URL)), noSecrets)
			if res.Outcome != c.want || res.StatusCode != c.status || res.RetryAfter != c.wantAfter {
				t.Fatalf("got %+v, want %v after %v", res, c.want, c.wantAfter)
			}
			if c.want != Delivered && !strings.HasPrefix(res.Err, "HTTP "+strconv.Itoa(c.status)) {
				t.Errorf("error text %q", res.Err)
			}
		})
	}
}

func TestHeadersAndStandardSignature(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	now := time.Unix(1_700_000_000, 0)
	s := NewSender("9.9.9", func() time.Time { return now })
	conn := &config.Connector{ID: "c", Type: config.TypeWebhook, Signature: config.SignatureStandard}
	tgt := target(t, rc.URL+"/hook")
	tgt.SigningSecret = "old-secret new-secret"
	tgt.BearerToken = "tok"
	tgt.Headers.Set("X-Team", "ops")
	tgt.Headers.Set("Idempotency-Key", "operator cannot override this")
	if res := s.Send(context.Background(), request(conn, tgt), noSecrets); res.Outcome != Delivered {
		t.Fatalf("send: %+v", res)
	}
	got := rc.requests()[0]
	want := map[string]string{
		"Content-Type": "application/json", "User-Agent": "animus-notifier-webhook/9.9.9", "Idempotency-Key": "d-1",
		"X-Animus-Event-Id": "e-1", "X-Animus-Delivery-Attempt": "3", "Authorization": "Bearer tok", "X-Team": "ops",
		"Webhook-Id": "d-1", "Webhook-Timestamp": "1700000000",
	}
	for k, v := range want {
		if g := got.header.Get(k); g != v {
			t.Errorf("%s = %q, want %q", k, g, v)
		}
	}
	if sigs := strings.Fields(got.header.Get("Webhook-Signature")); len(sigs) != 2 {
		t.Errorf("rotation: %d signatures, want one per secret", len(sigs))
	}
	for _, secret := range []string{"old-secret", "new-secret"} {
		if err := webhooksig.VerifyStandard(secret, got.header, got.body, now, 0); err != nil {
			t.Errorf("receiver holding %s: %v", secret, err)
		}
	}
}

func TestGitHubAndStripeStyles(t *testing.T) {
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(202) })
	now := time.Unix(1_700_000_000, 0)
	s := NewSender("1", func() time.Time { return now })
	for _, style := range []string{config.SignatureGitHub, config.SignatureStripe} {
		conn := &config.Connector{ID: "c", Type: config.TypeWebhook, Signature: style, SignatureHeader: "Acme-Signature"}
		tgt := target(t, rc.URL)
		tgt.SigningSecret = "shh-" + style
		if res := s.Send(context.Background(), request(conn, tgt), noSecrets); res.Outcome != Delivered {
			t.Fatalf("%s: %+v", style, res)
		}
	}
	reqs := rc.requests()
	if err := webhooksig.VerifyGitHub("shh-github", reqs[0].header.Get(webhooksig.HeaderGitHub), reqs[0].body); err != nil {
		t.Errorf("github: %v", err)
	}
	if reqs[0].header.Get("Webhook-Signature") != "" {
		t.Error("github style also sent a Standard Webhooks signature")
	}
	if err := webhooksig.VerifyStripe("shh-stripe", reqs[1].header.Get("Acme-Signature"), reqs[1].body, now, 0); err != nil {
		t.Errorf("stripe: %v", err)
	}
}

func TestRedirects(t *testing.T) {
	final := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	cases := []struct {
		name   string
		signed bool
		to     func(rc *receiver) string
		want   Outcome
	}{
		{"unsigned may follow to another host", false, func(*receiver) string { return final.URL + "/moved" }, Delivered},
		{"signed refuses another host", true, func(*receiver) string { return final.URL + "/moved" }, Permanent},
		{"signed follows the same host", true, func(rc *receiver) string { return rc.URL + "/ok" }, Delivered},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rc *receiver
			rc = newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/ok" {
					w.WriteHeader(200)
					return
				}
				w.Header().Set("Location", c.to(rc))
				w.WriteHeader(http.StatusTemporaryRedirect)
			})
			conn := &config.Connector{ID: "c", Type: config.TypeWebhook, Signature: config.SignatureStandard}
			tgt := target(t, rc.URL+"/start")
			if c.signed {
				tgt.SigningSecret = "secret"
			}
			res := NewSender("1", nil).Send(context.Background(), request(conn, tgt), noSecrets)
			if res.Outcome != c.want {
				t.Fatalf("got %+v, want %v", res, c.want)
			}
		})
	}
}

// TestErrorsAreRedacted: every error text, a receiver's echo included,
// goes through the caller's redaction function, and a request URL never
// reaches one at all (it may be a credential the caller does not know of).
func TestErrorsAreRedacted(t *testing.T) {
	const applied = "redacted: "
	redact := func(s string) string {
		return applied + strings.ReplaceAll(s, "signing-secret-value", pluginkit.RedactedMarker)
	}
	echo := newReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, "you sent signing-secret-value and more")
	})
	conn := &config.Connector{ID: "c", Type: config.TypeWebhook, Signature: config.SignatureStandard, SigningSecretEnv: "S"}
	badKey := target(t, echo.URL)
	badKey.SigningSecret = "whsec_%%%"
	cases := []struct {
		name   string
		target *config.Target
		want   Outcome
		says   string
	}{
		{"network error", target(t, "http://127.0.0.1:1/hooks/T0001/B0002/very-secret-token"), Transient, "connection refused"},
		{"echoed secret", target(t, echo.URL), Transient, "you sent " + pluginkit.RedactedMarker},
		{"bad signing secret", badKey, Misconfigured, "signing secret in S"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := NewSender("1", nil).Send(context.Background(), request(conn, c.target), redact)
			if res.Outcome != c.want || !strings.HasPrefix(res.Err, applied) || !strings.Contains(res.Err, c.says) {
				t.Fatalf("got %+v, want %v saying %q, through redact", res, c.want, c.says)
			}
			for _, secret := range []string{"very-secret-token", "signing-secret-value"} {
				if strings.Contains(res.Err, secret) {
					t.Fatalf("error text %q holds %q", res.Err, secret)
				}
			}
		})
	}
}

func TestTimeoutIsTransient(t *testing.T) {
	block := make(chan struct{})
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) { <-block })
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	conn := &config.Connector{ID: "c", Type: config.TypeWebhook, Signature: config.SignatureStandard}
	res := NewSender("1", nil).Send(ctx, request(conn, target(t, rc.URL)), noSecrets)
	if res.Outcome != Transient || !strings.Contains(res.Err, "timed out") {
		t.Fatalf("got %+v", res)
	}
}

func TestBadSigningSecretIsMisconfigured(t *testing.T) {
	conn := &config.Connector{ID: "c", Type: config.TypeWebhook, Signature: config.SignatureStandard, SigningSecretEnv: "S"}
	tgt := target(t, "http://127.0.0.1:1/")
	tgt.SigningSecret = "whsec_%%%"
	res := NewSender("1", nil).Send(context.Background(), request(conn, tgt), noSecrets)
	if res.Outcome != Misconfigured || strings.Contains(res.Err, "%%%") {
		t.Fatalf("got %+v", res)
	}
}
