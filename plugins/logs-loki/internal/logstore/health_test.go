package logstore

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
)

type healthResult struct {
	Status    string `json:"status"`
	LastError string `json:"last_error"`
}

// TestHealth checks health/check against each state of Loki: /ready, the
// labels fallback behind gateways that hide /ready (which also proves the
// credentials), refused credentials and unreachable or unconfigured Loki
// (unhealthy), and overload (degraded).
func TestHealth(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		url    string // "" = the fake, "dead" = nothing listening, "none" = unset
		env    []string
		fault  func(f *fakeloki.Server)
		status string
		last   string // exact last_error
		labels int    // requests to the labels endpoint
	}{
		{name: "ready", status: "healthy"},
		{name: "gateway without /ready, labels answer",
			fault:  func(f *fakeloki.Server) { f.FailPath(readyPath, 1, http.StatusNotFound, "404 page not found") },
			status: "healthy", labels: 1},
		{name: "gateway without /ready refuses the credentials",
			fault: func(f *fakeloki.Server) {
				f.FailPath(readyPath, 1, http.StatusNotFound, "404 page not found")
				f.FailPath(labelPath, 1, http.StatusUnauthorized, "invalid token")
			},
			status: "unhealthy", labels: 1,
			last: "Loki refused the credentials (HTTP 401); check LOKI_USERNAME/LOKI_PASSWORD, LOKI_BEARER_TOKEN and LOKI_TENANT_ID"},
		{name: "forbidden",
			fault:  func(f *fakeloki.Server) { f.FailPath(readyPath, 1, http.StatusForbidden, "forbidden") },
			status: "unhealthy",
			last:   "Loki refused the credentials (HTTP 403); check LOKI_USERNAME/LOKI_PASSWORD, LOKI_BEARER_TOKEN and LOKI_TENANT_ID"},
		{name: "rate limited",
			fault:  func(f *fakeloki.Server) { f.FailPath(readyPath, 1, http.StatusTooManyRequests, "slow down") },
			status: "degraded", last: "Loki answered 429: slow down"},
		{name: "ingester not ready",
			fault: func(f *fakeloki.Server) {
				f.FailPath(readyPath, 1, http.StatusServiceUnavailable, "Ingester not ready: waiting for 15s after being ready")
			},
			status: "degraded", last: "Loki answered 503: Ingester not ready: waiting for 15s after being ready"},
		{name: "unexpected status",
			fault:  func(f *fakeloki.Server) { f.FailPath(readyPath, 1, http.StatusTeapot, "short and stout") },
			status: "unhealthy", last: "Loki answered 418: short and stout"},
		{name: "unreachable", url: "dead", status: "unhealthy", last: "Loki unreachable: connection refused"},
		{name: "request timeout", env: []string{config.EnvTimeout, "100ms"},
			fault:  func(f *fakeloki.Server) { f.HangPath(readyPath, 1) },
			status: "unhealthy", last: "Loki unreachable: request timed out (LOKI_TIMEOUT)"},
		{name: "slower than the health budget",
			fault:  func(f *fakeloki.Server) { f.HangPath(readyPath, 1) },
			status: "unhealthy", last: "Loki unreachable: request timed out (LOKI_TIMEOUT)"},
		{name: "LOKI_URL unset", url: "none", status: "unhealthy", last: "LOKI_URL unset"},
		{name: "CA file without a certificate", env: []string{config.EnvCAFile, notPEM},
			status: "unhealthy", last: "LOKI_CA_FILE unusable: CA file holds no PEM certificate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newLoki(t)
			url := map[string]string{"": f.URL(), "dead": deadURL(t), "none": ""}[c.url]
			h := serve(t, New(testConfig(t, url, c.env...)))
			if c.fault != nil {
				c.fault(f)
			}
			var got healthResult
			h.kit.OK(h.t, "health/check", nil, &got)
			if got.Status != c.status || got.LastError != c.last {
				t.Fatalf("health %+v, want %s %q", got, c.status, c.last)
			}
			if n := f.RequestsTo(labelPath); n != c.labels {
				t.Errorf("%d labels requests, want %d", n, c.labels)
			}
		})
	}
}

// TestHealthRemembersPushFailures: a failed push (other than bad input)
// degrades health until a push succeeds or a minute passes.
func TestHealthRemembersPushFailures(t *testing.T) {
	f := newLoki(t)
	svc := New(testConfig(t, f.URL()))
	h := serve(t, svc)
	health := func() healthResult {
		var r healthResult
		h.kit.OK(h.t, "health/check", nil, &r)
		return r
	}
	store := func(id string) {
		_, _ = h.call("log_storage/store", storeParams(t, wireEntryOf(id, time.Now(), "info", "daemon", "", "d", "")))
	}

	f.FailPath(pushPath, 1, http.StatusBadRequest, "entry too far behind")
	store("bad-input")
	if r := health(); r.Status != "healthy" {
		t.Fatalf("after a rejected entry: %+v", r)
	}

	f.FailPath(pushPath, 1, http.StatusTooManyRequests, "") // Loki's rate-limit text
	store("limited")
	r := health()
	if r.Status != "degraded" || !strings.HasPrefix(r.LastError, "recent push failure: quota exceeded: store: Ingestion rate limit exceeded") {
		t.Fatalf("after a 429: %+v", r)
	}

	store("ok")
	if r := health(); r.Status != "healthy" || r.LastError != "" {
		t.Fatalf("after a successful push: %+v", r)
	}

	f.FailPath(pushPath, 1, http.StatusUnauthorized, "no org id")
	store("refused")
	if r := health(); r.Status != "degraded" || !strings.Contains(r.LastError, "Loki refused the credentials (HTTP 401)") {
		t.Fatalf("after a 401: %+v", r)
	}
	svc.mu.Lock()
	svc.lastFailure = time.Now().Add(-failureMemory - time.Second) // as if a minute passed
	svc.mu.Unlock()
	if r := health(); r.Status != "healthy" {
		t.Fatalf("a minute after the failure: %+v", r)
	}
}
