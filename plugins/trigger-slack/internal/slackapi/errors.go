package slackapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

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

// call runs one Web API method. A rate limit is retried once, after
// Retry-After, when that is at most maxRetryWait; Slack asks for exactly
// that and one retry keeps a phase from hanging. The answer is that of an
// ok:true; errors come back as *pluginkit.Error, except the caller's own
// cancellation, which pluginkit reports as cancelled or timeout.
func (c *Client) call(ctx context.Context, method string, form url.Values) (answer, error) {
	for attempt := 0; ; attempt++ {
		ex := c.post(ctx, method, form)
		ans, err := ex.interpret(method)
		if err == nil {
			return ans, nil
		}
		if ctx.Err() != nil {
			return answer{}, ctx.Err()
		}
		if wait := ex.retryAfter(); ex.status == http.StatusTooManyRequests && attempt == 0 && wait <= c.maxRetryWait {
			c.log.Warn("slack rate limited; retrying once", "method", method, "retry_after", wait)
			if err := c.sleep(ctx, wait); err != nil {
				return answer{}, err
			}
			continue
		}
		return answer{}, err
	}
}

// interpret turns one exchange into Slack's answer or the reference
// plugin's error. Only ok and error decide: a 200 whose ok is true is a
// success whatever else the answer holds, since Slack has acted on it.
func (ex exchange) interpret(method string) (answer, *pluginkit.Error) {
	switch {
	case ex.err != nil:
		return answer{}, pluginkit.Errorf(CategoryTransport, "slack transport: %s: %v", method, ex.err).Wrap(ex.err)
	case ex.status == http.StatusTooManyRequests:
		return answer{}, pluginkit.Errorf(CategoryHTTP, "slack http %d", ex.status).
			WithData("status", ex.status).
			WithData("retry_after_ms", ex.retryAfter().Milliseconds()).
			WithData("body", textBody(ex.body))
	case ex.status != http.StatusOK:
		// Slack sends HTML with 5xx; it is kept as text, not parsed.
		return answer{}, pluginkit.Errorf(CategoryHTTP, "slack http %d", ex.status).
			WithData("status", ex.status).WithData("body", textBody(ex.body))
	}
	ans, err := parseAnswer(ex.body)
	if err != nil {
		return answer{}, decodeError(method, err)
	}
	if ans.ok() {
		return ans, nil
	}
	code := strings.TrimSpace(ans.str("error"))
	if code == "" {
		// Not a success, but not an error Slack named either: nothing a
		// caller could act on, so it is reported as undecodable.
		return answer{}, decodeError(method, decodeErr("answer has neither ok:true nor an error code"))
	}
	e := pluginkit.Errorf(CategorySlackError, "slack api error: %s", code).WithData("slack_error", code)
	if len(ex.body) <= maxBodyInError {
		e = e.WithData("body", json.RawMessage(ex.body))
	}
	return answer{}, e
}

func decodeError(method string, err error) *pluginkit.Error {
	return pluginkit.Errorf(CategoryDecode, "slack decode: %s: %v", method, err).Wrap(err)
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
