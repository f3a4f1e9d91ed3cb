package logstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/pluginkittest"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
)

// waitLimit bounds every wait for something asynchronous. It is generous
// on purpose: a loaded 2-core machine must not fail a test that would
// pass, and no test asserts how long anything took.
const waitLimit = 20 * time.Second

// host is a Service served in process by pluginkittest, as the daemon
// would talk to it: real framing, error objects and tail notifications.
// The kit records every frame the plugin writes (so notifications never
// block the plugin and tests can check order), prints the wire log when a
// test fails, and at cleanup fails a test whose plugin did not stop or
// wrote a line that is not JSON.
//
// Calls take the kit's ids; a tail whose events a test reads may be sent
// under an id the test picks (events carry it exactly as sent, number or
// string). Ids are compared as the raw JSON text.
type host struct {
	t    *testing.T
	svc  *Service
	kit  *pluginkittest.Host
	init json.RawMessage // initialize's result
}

// event is log_storage/event's params.
type event struct {
	ID    json.RawMessage         `json:"id"`
	Entry *Entry                  `json:"entry"`
	Error *pluginkittest.RPCError `json:"error"`
}

// testConfig loads the configuration from env pairs; LOKI_URL is set only
// when url is not "".
func testConfig(t testing.TB, url string, kv ...string) config.Config {
	t.Helper()
	m := map[string]string{}
	if url != "" {
		m[config.EnvURL] = url
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	cfg, err := config.Load(func(k string) string { return m[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// serve starts svc and completes the handshake as a protocol 1.0 host
// with streaming and cancellation.
func serve(t *testing.T, svc *Service) *host {
	t.Helper()
	mux := pluginkit.NewMux()
	svc.Register(mux)
	h := &host{t: t, svc: svc, kit: pluginkittest.Start(t, pluginkit.Plugin{Name: "animus-logs-loki",
		Kind: "log_storage_backend", Mux: mux, Streaming: true, Init: svc.Init, Health: svc.Health})}
	var err error
	h.init, err = h.kit.Handshake(pluginkittest.Handshake{ProtocolVersion: "1.0.0", HostVersion: "test",
		Capabilities: &pluginkit.HostCapabilities{Streaming: true, Cancellation: true}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return h
}

// frames is every frame the plugin wrote so far, in order.
func (h *host) frames() []pluginkittest.Frame {
	frames, _ := h.kit.Frames(0)
	return frames
}

// send writes a request under the id the test picked (raw JSON: a
// number or a string) without waiting.
func (h *host) send(id, method string, params any) {
	h.t.Helper()
	if err := h.kit.RequestID(json.RawMessage(id), method, params); err != nil {
		h.t.Fatalf("send %s: %v", method, err)
	}
}

// start writes a request under the kit's next id without waiting and
// returns the id.
func (h *host) start(method string, params any) string {
	h.t.Helper()
	id, err := h.kit.Request(method, params)
	if err != nil {
		h.t.Fatalf("send %s: %v", method, err)
	}
	return string(id)
}

// cancel sends the host's $/cancelRequest for request id.
func (h *host) cancel(id string) { h.notify("$/cancelRequest", `{"id":`+id+`}`) }

// notify writes a notification; string params are sent as raw JSON.
func (h *host) notify(method string, params any) {
	h.t.Helper()
	if err := h.kit.Notify(method, params); err != nil {
		h.t.Fatalf("notify %s: %v", method, err)
	}
}

// response waits for the response to id and returns it with its index in
// the frame sequence.
func (h *host) response(id string) (pluginkittest.Frame, int) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	f, at, err := h.kit.AwaitAt(ctx, json.RawMessage(id))
	if err != nil {
		h.t.Fatalf("waited for the response to id %s: %v", id, err)
	}
	return f, at
}

// call sends a request under the kit's next id and waits for its answer.
// params are sent as pluginkittest.Host.Request sends them (a string as
// raw JSON, nil as no params).
func (h *host) call(method string, params any) (json.RawMessage, *pluginkittest.RPCError) {
	h.t.Helper()
	f, _ := h.response(h.start(method, params))
	return f.Result, f.Error
}

// events returns the log_storage/event notifications for tail id (raw, as
// sent) among frames, in order.
func events(t testing.TB, frames []pluginkittest.Frame, id string) []event {
	var out []event
	for _, f := range frames {
		if f.Method != "log_storage/event" {
			continue
		}
		var ev event
		if err := json.Unmarshal(f.Params, &ev); err != nil {
			t.Fatalf("event params %s: %v", f.Params, err)
		}
		if string(ev.ID) == id {
			out = append(out, ev)
		}
	}
	return out
}

// awaitEvents waits until tail id has at least n events and returns them.
func (h *host) awaitEvents(id string, n int) []event {
	h.t.Helper()
	h.awaitCount(id, n)
	return events(h.t, h.frames(), id)
}

// awaitCount waits until tail id has at least n events, reading only their
// ids (for long streams).
func (h *host) awaitCount(id string, n int) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ofTail := func(f pluginkittest.Frame) bool {
		var ev struct{ ID json.RawMessage }
		return f.Method == "log_storage/event" && json.Unmarshal(f.Params, &ev) == nil && string(ev.ID) == id
	}
	next := 0
	for i := range n {
		var err error
		if _, next, err = h.kit.WaitNotification(ctx, next, ofTail); err != nil {
			h.t.Fatalf("waited for %d events for tail %s, %d came: %v", n, id, i, err)
		}
	}
}

// eventIDs lists the entry ids of events (or "error" for an error event).
func eventIDs(evs []event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		if ev.Entry != nil {
			out[i] = ev.Entry.ID
		} else {
			out[i] = "error"
		}
	}
	return out
}
