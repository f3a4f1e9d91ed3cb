package slackapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/slack-go/slack"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// The outbound error categories (trigger-slack.md §3.5). All are -32603:
// pluginkit maps categories it does not know to the internal error code.
const (
	CategorySlackError   pluginkit.Category = "slack_error"
	CategoryHTTP         pluginkit.Category = "http"
	CategoryTransport    pluginkit.Category = "transport"
	CategoryDecode       pluginkit.Category = "decode"
	CategoryMissingToken pluginkit.Category = "missing_token"
)

// maxBodyInError bounds the Slack body copied into error data.
const maxBodyInError = 8 << 10

// call runs one Slack request with a fresh capture. A rate limit is
// retried once, after Retry-After, when that is at most maxRetryWait;
// Slack asks for exactly that and one retry keeps a phase from hanging.
// Errors come back as *pluginkit.Error, except the caller's own
// cancellation, which pluginkit reports as cancelled or timeout.
func (c *Client) call(ctx context.Context, method string, fn func(context.Context) error) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		cctx, capt := withCapture(ctx)
		err := fn(cctx)
		status, body, header := capt.get()
		if err == nil {
			return body, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		wait, limited := rateLimit(err, status, header)
		if limited && attempt == 0 && wait <= c.maxRetryWait {
			c.log.Warn("slack rate limited; retrying once", "method", method, "retry_after", wait)
			if err := c.sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		return nil, mapError(method, err, status, body, wait, limited)
	}
}

// rateLimit reports whether err is a 429 and how long Slack asked to wait
// (slack-go's RateLimitedError when Retry-After is present; a bare 429
// otherwise, for which one second is the conventional minimum).
func rateLimit(err error, status int, header http.Header) (time.Duration, bool) {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return max(rl.RetryAfter, time.Second), true
	}
	if status != http.StatusTooManyRequests {
		return 0, false
	}
	wait := time.Second
	if s, perr := strconv.Atoi(header.Get("Retry-After")); perr == nil && s > 1 {
		wait = time.Duration(s) * time.Second
	}
	return wait, true
}

// mapError turns a slack-go failure into the reference plugin's error.
func mapError(method string, err error, status int, body []byte, wait time.Duration, limited bool) *pluginkit.Error {
	var se slack.SlackErrorResponse
	var sc slack.StatusCodeError
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case limited:
		return pluginkit.Errorf(CategoryHTTP, "slack http %d", http.StatusTooManyRequests).
			WithData("status", http.StatusTooManyRequests).
			WithData("retry_after_ms", wait.Milliseconds()).
			WithData("body", textBody(body)).Wrap(err)
	case errors.As(err, &se):
		e := pluginkit.Errorf(CategorySlackError, "slack api error: %s", se.Err).WithData("slack_error", se.Err)
		if json.Valid(body) && len(body) <= maxBodyInError {
			e = e.WithData("body", json.RawMessage(body))
		}
		return e.Wrap(err)
	case errors.As(err, &sc):
		return pluginkit.Errorf(CategoryHTTP, "slack http %d", sc.Code).
			WithData("status", sc.Code).WithData("body", textBody(body)).Wrap(err)
	case status != 0 && status != http.StatusOK:
		// A non-2xx slack-go could not classify (a malformed Retry-After).
		return pluginkit.Errorf(CategoryHTTP, "slack http %d", status).
			WithData("status", status).WithData("body", textBody(body)).Wrap(err)
	case errors.As(err, &syntax), errors.As(err, &typeErr), errors.Is(err, errDecode),
		status == http.StatusOK && !json.Valid(body):
		return pluginkit.Errorf(CategoryDecode, "slack decode: %s: %v", method, err).Wrap(err)
	default:
		return pluginkit.Errorf(CategoryTransport, "slack transport: %s: %v", method, err).Wrap(err)
	}
}

// errDecode marks a response that parsed but lacks what the call needs.
var errDecode = errors.New("unexpected response")

func decodeErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errDecode}, args...)...)
}

func textBody(b []byte) string {
	if len(b) > maxBodyInError {
		return string(b[:maxBodyInError]) + "…"
	}
	return string(b)
}
