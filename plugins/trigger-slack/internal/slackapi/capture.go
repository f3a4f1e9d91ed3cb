package slackapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// maxResponseBytes bounds a Slack response read into memory. Web API
// answers are a few KiB; anything near this is not Slack.
const maxResponseBytes = 4 << 20

// capture holds the last HTTP response of one outbound call, so the call
// can return Slack's whole JSON (the reference plugin's result) and put the
// body of a failure into error data. slack-go only exposes parsed structs.
type capture struct {
	mu     sync.Mutex
	status int
	body   []byte
	header http.Header
}

type captureKey struct{}

func withCapture(ctx context.Context) (context.Context, *capture) {
	c := &capture{}
	return context.WithValue(ctx, captureKey{}, c), c
}

func (c *capture) get() (status int, body []byte, header http.Header) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, c.body, c.header
}

// captureTransport copies each response body for the capture in the
// request's context (slack-go builds requests with the caller's context),
// and hands slack-go an identical body to parse. Requests without a capture
// (Socket Mode's apps.connections.open) pass through untouched.
type captureTransport struct{ base http.RoundTripper }

func (t captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	c, _ := req.Context().Value(captureKey{}).(*capture)
	if c == nil {
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(body) > maxResponseBytes {
		return nil, fmt.Errorf("response larger than %d bytes", maxResponseBytes)
	}
	c.mu.Lock()
	c.status, c.body, c.header = resp.StatusCode, body, resp.Header
	c.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}
