package logstore

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/loki"
)

// clip bounds a Loki message for the wire and the log.
func clip(s string) string {
	if len(s) > 512 {
		return s[:512] + "…"
	}
	return s
}

// retryable reports failures worth another attempt: 5xx, timeouts and
// connection errors. 429 is not retried inside a call: the daemon's 5 s
// budget is shorter than Loki's Retry-After, and the entry is the
// daemon's to drop or resend.
func retryable(err error) bool {
	var se *loki.StatusError
	if errors.As(err, &se) {
		return se.Status >= 500
	}
	return !errors.Is(err, context.Canceled)
}

// transportReason words a connection-level failure without the URL (which
// may carry credentials in a userinfo part).
func transportReason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "request timed out (LOKI_TIMEOUT)"
	case strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	case strings.Contains(err.Error(), "no such host"):
		return "host not found"
	case strings.Contains(err.Error(), "certificate"):
		return "TLS certificate not trusted (LOKI_CA_FILE)"
	}
	return "connection failed"
}

// rpcError maps a Loki failure to the log-storage error codes:
// 429 quota_exceeded, 400/413 -32602 with Loki's reason, 401/403/404 and
// 5xx/timeouts/connection errors unavailable.
func rpcError(op string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var se *loki.StatusError
	if !errors.As(err, &se) {
		return pluginkit.Unavailable("%s: Loki %s", op, transportReason(err)).Wrap(err)
	}
	switch {
	case se.Status == http.StatusTooManyRequests:
		return pluginkit.QuotaExceeded("%s: %s", op, clip(se.Message)).WithData("http_status", se.Status)
	case se.Status == http.StatusBadRequest || se.Status == http.StatusRequestEntityTooLarge:
		return pluginkit.InvalidParams("%s rejected by Loki: %s", op, clip(se.Message)).WithData("http_status", se.Status)
	case se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden:
		return pluginkit.Unavailable("%s: Loki refused the credentials (HTTP %d)", op, se.Status).WithData("http_status", se.Status)
	case se.Status == http.StatusNotFound:
		return pluginkit.Unavailable("%s: Loki endpoint not found (HTTP 404); check LOKI_URL", op).WithData("http_status", se.Status)
	}
	return pluginkit.Unavailable("%s: Loki answered %d: %s", op, se.Status, clip(se.Message)).WithData("http_status", se.Status)
}

// smRejected reports a push refused because structured metadata is not
// allowed (allow_structured_metadata: false, or a schema before v13).
func smRejected(err error) bool {
	var se *loki.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusBadRequest {
		return false
	}
	m := strings.ToLower(se.Message)
	return strings.Contains(m, "structured metadata") || strings.Contains(m, "structured_metadata")
}
