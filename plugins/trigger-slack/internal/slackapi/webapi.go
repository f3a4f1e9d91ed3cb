package slackapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxResponseBytes bounds a Slack response read into memory. Web API
// answers are a few KiB; anything near this is not Slack.
const maxResponseBytes = 4 << 20

// exchange is one HTTP round trip with a Web API method, unparsed.
type exchange struct {
	status int
	header http.Header
	body   []byte
	// err is a failure to get an answer at all (network, timeout,
	// cancellation, an oversized body): the transport category.
	err error
}

// post sends one Web API method the way slack-go sends it (a form body
// carrying the bot token, to the configured API URL, so the request Slack
// and the test servers see is unchanged) but keeps the answer as bytes.
//
// slack-go decodes the whole answer into typed structs, and a field it
// cannot decode (a block type it does not know, a message.blocks of an
// unexpected shape) fails the call after Slack has already acted on it:
// a posted message reported as an error, which a retrying host posts
// again. Reading only the few fields the plugin needs (answer) removes
// that failure mode for every method.
func (c *Client) post(ctx context.Context, method string, form url.Values) exchange {
	values := url.Values{"token": {c.botToken}}
	for k, v := range form {
		values[k] = v
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.apiURL+method, strings.NewReader(values.Encode()))
	if err != nil {
		return exchange{err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.httpc.Do(req)
	if err != nil {
		return exchange{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return exchange{status: resp.StatusCode, header: resp.Header, err: err}
	}
	if len(body) > maxResponseBytes {
		return exchange{status: resp.StatusCode, header: resp.Header,
			err: fmt.Errorf("response larger than %d bytes", maxResponseBytes)}
	}
	return exchange{status: resp.StatusCode, header: resp.Header, body: body}
}

// retryAfter is how long a 429 asks to wait: Retry-After in seconds, and
// at least one second (the conventional minimum when the header is
// missing, zero or malformed).
func (ex exchange) retryAfter() time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(ex.header.Get("Retry-After"))); err == nil && s > 1 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}

// answer is a 200 answer's top-level object, decoded one level deep and
// no further: ok, error, channel, ts, message_ts and the like are read on
// demand, and everything else (message, blocks, metadata) stays raw and
// unchecked. The raw body is what outbound methods return.
type answer struct {
	raw    []byte
	fields map[string]json.RawMessage
}

// parseAnswer accepts any JSON object whose ok, if present, is a boolean.
func parseAnswer(body []byte) (answer, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return answer{}, err
	}
	if fields == nil { // the body was null
		return answer{}, decodeErr("answer is not a JSON object")
	}
	a := answer{raw: body, fields: fields}
	if raw, present := fields["ok"]; present {
		var ok bool
		if json.Unmarshal(raw, &ok) != nil {
			return answer{}, decodeErr("ok is %s, not a boolean", raw)
		}
	}
	return a, nil
}

// ok reports whether Slack said the call succeeded.
func (a answer) ok() bool {
	var ok bool
	return json.Unmarshal(a.fields["ok"], &ok) == nil && ok
}

// str returns the string at path (e.g. "channel", "id"), or "" when any
// step is missing or of another type.
func (a answer) str(path ...string) string {
	fields := a.fields
	for i, key := range path {
		raw, present := fields[key]
		if !present {
			return ""
		}
		if i == len(path)-1 {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return ""
			}
			return s
		}
		fields = nil
		if json.Unmarshal(raw, &fields) != nil {
			return ""
		}
	}
	return ""
}
