package e2etest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// CallTimeout bounds one Call or Failure, spawn-to-reply budgets aside.
const CallTimeout = 15 * time.Second

// schemaSet caches schemacheck.Default for the test binary: compiling the
// upstream schemas for every spawned host would dominate short tests.
var schemaSet = sync.OnceValues(schemacheck.Default)

// Schemas returns the upstream schema set, failing t if it cannot load.
func Schemas(t testing.TB) *schemacheck.Set {
	t.Helper()
	set, err := schemaSet()
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// Ctx is a context that ends after d or when t ends, whichever is first.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Call sends a request and returns its result, failing t on a transport
// error or an error response.
func Call(t testing.TB, h *fakehost.Host, method string, params any) json.RawMessage {
	t.Helper()
	resp, err := h.Call(Ctx(t, CallTimeout), method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if resp.Error != nil {
		t.Fatalf("%s: error %d %s (data %s)", method, resp.Error.Code, resp.Error.Message, resp.Error.Data)
	}
	return resp.Result
}

// Failure sends a request that must fail and returns its error.
func Failure(t testing.TB, h *fakehost.Host, method string, params any) *fakehost.RPCError {
	t.Helper()
	resp, err := h.Call(Ctx(t, CallTimeout), method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if resp.Error == nil {
		t.Fatalf("%s: succeeded with %s, want an error", method, resp.Result)
	}
	return resp.Error
}
