package pluginkittest

import (
	"encoding/json"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// OK calls method and fails t unless it succeeds. The result is decoded
// into v when v is not nil, and returned as sent.
func (h *Host) OK(t testing.TB, method string, params any, v any) json.RawMessage {
	t.Helper()
	res, err := h.Call(method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if v != nil {
		if err := json.Unmarshal(res, v); err != nil {
			t.Fatalf("%s: result %s: %v", method, res, err)
		}
	}
	return res
}

// Fails calls method and fails t unless the plugin answers an error with
// code (and category, unless it is ""). The error is returned so the
// caller can check its message and data.
func (h *Host) Fails(t testing.TB, method string, params any, code int, category pluginkit.Category) *RPCError {
	t.Helper()
	res, err := h.Call(method, params)
	e, ok := AsRPCError(err)
	switch {
	case err == nil:
		t.Fatalf("%s: succeeded with %s, want error %d", method, res, code)
	case !ok:
		t.Fatalf("%s: %v", method, err)
	case e.Code != code || (category != "" && e.Category() != string(category)):
		t.Fatalf("%s: error %v, want code %d category %q", method, e, code, category)
	}
	return e
}
