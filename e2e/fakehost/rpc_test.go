package fakehost

import (
	"encoding/json"
	"testing"
)

// Ids are matched byte-exactly on their compact form and echoed verbatim, so
// string ids and integers beyond int64 round-trip; explicit ids never collide
// with the integer sequence Call uses.
func TestRequestIDsAndParams(t *testing.T) {
	h := New(t, miniConfig("good"))
	ctx := testCtx(t)
	mustInit(t, h, Handshake{Preset: PresetDaemon})

	for _, id := range []string{`"req-1"`, `18446744073709551615`, `3`} {
		resp, err := h.Request(ctx, json.RawMessage(id), "$/ping", nil)
		if err != nil {
			t.Fatalf("id %s: %v", id, err)
		}
		if string(resp.ID) != id || resp.Method != "$/ping" || string(resp.Result) != "{}" {
			t.Errorf("id %s: response %+v", id, resp)
		}
	}
	// Call skips 3, which Request already used.
	resp, err := h.Call(ctx, "$/ping", nil)
	if err != nil || string(resp.ID) != "2" {
		t.Fatalf("call: %+v %v", resp, err)
	}
	resp, err = h.Call(ctx, "$/ping", nil)
	if err != nil || string(resp.ID) != "4" {
		t.Fatalf("call after explicit 3: %+v %v", resp, err)
	}
	if _, err := h.Request(ctx, json.RawMessage(`"req-1"`), "$/ping", nil); err == nil {
		t.Error("reusing an id was accepted")
	}

	// Raw params go out verbatim; nil params omit the key.
	if _, err := h.Call(ctx, "$/ping", json.RawMessage(`{ "spaced" : true }`)); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitStderr(ctx, `recv: {"jsonrpc":"2.0","id":5,"method":"$/ping","params":{ "spaced" : true }}`+"\n"); err != nil {
		t.Error(err)
	}
	if err := h.WaitStderr(ctx, `recv: {"jsonrpc":"2.0","id":4,"method":"$/ping"}`+"\n"); err != nil {
		t.Error(err)
	}

	// Send registers the requests it carries, so their replies are matched.
	if err := h.Send([]byte(`{"jsonrpc":"2.0","id":"raw-1","method":"health/check"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	resp, err = h.Await(ctx, json.RawMessage(` "raw-1" `))
	if err != nil || resp.Method != "health/check" {
		t.Fatalf("await raw-1: %+v %v", resp, err)
	}

	// Errors keep code, message and data.category.
	resp, err = h.Call(ctx, "no/such", map[string]string{"a": "<&>"})
	if err != nil || resp.Error == nil || resp.Error.Code != -32601 || resp.Error.Category() != "not_found" {
		t.Fatalf("unknown method: %+v %v", resp, err)
	}
	if err := h.WaitStderr(ctx, `"params":{"a":"<&>"}`); err != nil {
		t.Error("params were HTML-escaped: ", err)
	}

	// Notifications are recorded in order.
	if _, err := h.Call(ctx, "mini/notify", nil); err != nil {
		t.Fatal(err)
	}
	if ns := h.Notifications(); len(ns) != 1 || ns[0].Method != "log/entry" {
		t.Errorf("notifications = %+v", ns)
	}
}

// Expect makes a response to a frame the host could not register (here an
// id:null reply, emitted verbatim) a matched response instead of a violation.
func TestExpect(t *testing.T) {
	h := New(t, miniConfig("good"))
	ctx := testCtx(t)
	mustInit(t, h, Handshake{Preset: PresetDaemon})
	h.Expect(json.RawMessage(" null "), "(bad frame)")
	if _, err := h.Call(ctx, "mini/emit", map[string]any{"raw": `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n"}); err != nil {
		t.Fatal(err)
	}
	resp, err := h.Await(ctx, json.RawMessage("null"))
	if err != nil || resp.Error == nil || resp.Error.Code != -32700 || resp.Method != "(bad frame)" {
		t.Fatalf("await null: %+v %v", resp, err)
	}
}
