package logstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/loki"
)

// timeoutError is a net.Error that timed out, as a dialer reports it.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestTransportReason: connection failures are worded without the URL
// (which may carry credentials in its userinfo part) and name the setting
// to check.
func TestTransportReason(t *testing.T) {
	wrap := func(err error) error {
		return &url.Error{Op: "Post", URL: "http://user:s3cret@loki:3100/loki/api/v1/push", Err: err}
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{wrap(context.DeadlineExceeded), "request timed out (LOKI_TIMEOUT)"},
		{wrap(timeoutError{}), "request timed out (LOKI_TIMEOUT)"},
		{wrap(errors.New("dial tcp 127.0.0.1:3100: connect: connection refused")), "connection refused"},
		{wrap(errors.New("dial tcp: lookup loki on 127.0.0.53:53: no such host")), "host not found"},
		{wrap(errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority")), "TLS certificate not trusted (LOKI_CA_FILE)"},
		{wrap(errors.New("EOF")), "connection failed"},
	} {
		got := transportReason(c.err)
		if got != c.want {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
		// The cause (with the URL) is kept for the log; only Message goes
		// on the wire.
		var pe *pluginkit.Error
		if !errors.As(rpcError("store", c.err), &pe) || strings.Contains(pe.Message, "s3cret") || pe.Message != "backend unavailable: store: Loki "+c.want {
			t.Errorf("wire error %+v", pe)
		}
	}
}

// TestRetryable: 5xx and connection failures are worth another attempt;
// 4xx (including 429) and the caller's cancellation are not.
func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&loki.StatusError{Status: 500}, true},
		{&loki.StatusError{Status: 503}, true},
		{fmt.Errorf("push: %w", &loki.StatusError{Status: 502}), true},
		{&loki.StatusError{Status: 429}, false},
		{&loki.StatusError{Status: 400}, false},
		{&loki.StatusError{Status: 401}, false},
		{errors.New("connection reset by peer"), true},
		{context.DeadlineExceeded, true},
		{&url.Error{Op: "Post", Err: context.Canceled}, false},
	} {
		if got := retryable(c.err); got != c.want {
			t.Errorf("retryable(%v) = %v", c.err, got)
		}
	}
	if err := rpcError("query", fmt.Errorf("read: %w", context.Canceled)); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancellation became %v; pluginkit must see it to answer -32002", err)
	}
}

// TestSMRejected recognises Loki's refusals of structured metadata, and
// nothing else, as the trigger for the auto-mode fallback.
func TestSMRejected(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&loki.StatusError{Status: 400, Message: "stream '{level=\"info\"}' includes structured metadata, but this feature is disallowed."}, true},
		{&loki.StatusError{Status: 400, Message: "Structured_Metadata is not allowed for schema v12"}, true},
		{&loki.StatusError{Status: 400, Message: "entry too far behind"}, false},
		{&loki.StatusError{Status: 500, Message: "structured metadata store down"}, false},
		{errors.New("structured metadata"), false},
	} {
		if got := smRejected(c.err); got != c.want {
			t.Errorf("smRejected(%v) = %v", c.err, got)
		}
	}
}

// TestClip bounds Loki's text in wire messages and logs to 512 bytes,
// marking the cut.
func TestClip(t *testing.T) {
	exact := strings.Repeat("a", 512)
	if got := clip(exact); got != exact {
		t.Fatalf("a 512-byte message was changed to %d bytes", len(got))
	}
	if got := clip(exact + "tail"); got != exact+"…" {
		t.Fatalf("clip kept %q", got[500:])
	}
}
