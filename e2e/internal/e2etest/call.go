package e2etest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// CallTimeout bounds one Request, Call or Failure: the daemon's notifier
// budget, and more than any plugin here needs for one request.
const CallTimeout = 15 * time.Second

// Request sends one request and returns the response, result or error.
// Only a transport failure (the process gone, no reply within CallTimeout)
// fails t.
func Request(t testing.TB, h *fakehost.Host, method string, params any) *fakehost.Response {
	t.Helper()
	return RequestContext(t, context.Background(), h, method, params)
}

// RequestContext is Request also bounded by ctx, for tests that hold a
// deadline of their own.
func RequestContext(t testing.TB, ctx context.Context, h *fakehost.Host, method string, params any) *fakehost.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	resp, err := h.Call(ctx, method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// Call sends a request that must succeed and returns its result.
func Call(t testing.TB, h *fakehost.Host, method string, params any) json.RawMessage {
	t.Helper()
	resp := Request(t, h, method, params)
	if resp.Error != nil {
		t.Fatalf("%s: error %d %s (data %s)", method, resp.Error.Code, resp.Error.Message, resp.Error.Data)
	}
	return resp.Result
}

// Failure sends a request that must fail and returns its error.
func Failure(t testing.TB, h *fakehost.Host, method string, params any) *fakehost.RPCError {
	t.Helper()
	resp := Request(t, h, method, params)
	if resp.Error == nil {
		t.Fatalf("%s: succeeded with %s, want an error", method, resp.Result)
	}
	return resp.Error
}

// Decode unmarshals a result into a T, failing t if it does not decode.
func Decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// Try sends one request within budget and decodes a result into out
// (unless out is nil). An error response comes back as rpcErr, a transport
// failure or an undecodable result as err; Try never touches a test, so
// goroutines and tests that kill the plugin mid-request can use it.
func Try(h *fakehost.Host, budget time.Duration, method string, params, out any) (rpcErr *fakehost.RPCError, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	resp, err := h.Call(ctx, method, params)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return resp.Error, nil
	}
	if out != nil {
		if err := json.Unmarshal(resp.Result, out); err != nil {
			return nil, fmt.Errorf("%s result %s: %w", method, resp.Result, err)
		}
	}
	return nil, nil
}
