package pluginkit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name     string
		method   string
		params   any
		code     int
		category string
		message  string // substring
	}{
		{"unknown method", "nope/nothing", nil, CodeMethodNotFound, "method_not_found", `"nope/nothing"`},
		{"other kind's method", "subject/list", nil, CodeMethodNotFound, "method_not_found", "subject/list"},
		{"own kind, not implemented", "trigger/ack", nil, CodeMethodUnsupported, "not_supported", "trigger/ack"},
		{"params field of wrong type", "test/echo", map[string]any{"message": 7}, CodeInvalidParams, "invalid_request", `field "message": expected string, got number`},
		{"params not an object", "test/echo", []any{1}, CodeInvalidParams, "invalid_request", "expected object, got array"},
		{"validator", "test/sleep", map[string]any{"ms": -1}, CodeInvalidParams, "invalid_request", "ms must not be negative"},
		{"wrapped *Error keeps its code", "test/fail", map[string]any{"message": "TASK-1"}, CodeInvalidParams, "not_found", "not found: subject TASK-1"},
		{"panic", "test/panic", nil, CodeInternalError, "internal", "internal error"},
	}
	h := startHost(t, testPlugin())
	h.initialize()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, msg, cat := errCode(t, h.call(tc.method, tc.params))
			if code != tc.code || cat != tc.category || !strings.Contains(msg, tc.message) {
				t.Errorf("got %d/%s %q, want %d/%s containing %q", code, cat, msg, tc.code, tc.category, tc.message)
			}
		})
	}
	// The plugin keeps running after all of that.
	if r := result(t, h.call("test/echo", map[string]any{"message": "still here"})); r["message"] != "still here" {
		t.Fatalf("echo after errors = %v", r)
	}
}

func TestInternalErrorsAreRedacted(t *testing.T) {
	t.Setenv("TEST_PLUGIN_TOKEN", "xoxb-super-secret")
	h := startHost(t, testPlugin())
	h.initialize()
	code, msg, cat := errCode(t, h.call("test/internal", map[string]any{"message": "xoxb-super-secret"}))
	if code != CodeInternalError || cat != "internal" || msg != "internal error" {
		t.Fatalf("internal error on the wire: %d/%s %q", code, cat, msg)
	}
	health := result(t, h.call("health/check", nil))
	last, _ := health["last_error"].(string)
	for _, leak := range []string{"xoxb-super-secret", "/var/lib/secret"} {
		if strings.Contains(last, leak) {
			t.Errorf("last_error %q leaks %q", last, leak)
		}
	}
	if !strings.Contains(last, "test/internal") || !strings.Contains(last, "[REDACTED]") || !strings.Contains(last, "<path>") {
		t.Errorf("last_error %q should name the method and show the redactions", last)
	}
}

func TestHealthCheck(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	r := result(t, h.call("health/check", map[string]any{}))
	if r["status"] != "degraded" {
		t.Errorf("status = %v (the plugin hook says degraded)", r["status"])
	}
	if rss, ok := r["memory_usage_bytes"].(float64); !ok || rss < 1<<20 {
		t.Errorf("memory_usage_bytes = %v, want a real RSS", r["memory_usage_bytes"])
	}
	if _, ok := r["uptime_ms"].(float64); !ok {
		t.Errorf("uptime_ms missing: %v", r)
	}
	if _, ok := r["last_error"]; ok {
		t.Errorf("last_error present with no error: %v", r)
	}
}

func TestPingNeverWaitsBehindHandlers(t *testing.T) {
	p := testPlugin()
	p.Concurrency = 2
	h := startHost(t, p)
	h.initialize()
	for range 4 { // more slow requests than workers
		h.sendRequest("test/sleep", map[string]any{"ms": 1000})
	}
	start := time.Now()
	ping := h.sendRequest("$/ping", nil)
	health := h.sendRequest("health/check", nil)
	got := 0
	for got < 2 {
		f := h.next(2 * time.Second)
		if id, _ := f["id"].(float64); int(id) == ping || int(id) == health {
			got++
		}
	}
	if elapsed := time.Since(start); elapsed > 200*time.Millisecond {
		t.Fatalf("$/ping and health/check took %v behind busy workers", elapsed)
	}
}

func TestCancelRequest(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	id := h.sendRequest("test/sleep", map[string]any{"ms": 10000})
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	h.notify("$/cancelRequest", map[string]any{"id": id})
	resp := h.await(id)
	code, _, cat := errCode(t, resp)
	if code != CodeRequestCancelled || cat != "cancelled" {
		t.Fatalf("cancelled request answered %d/%s", code, cat)
	}
	if time.Since(start) > time.Second {
		t.Fatalf("cancellation took %v", time.Since(start))
	}
	// Cancelling an unknown or finished id is silently ignored.
	h.notify("$/cancelRequest", map[string]any{"id": id})
	h.notify("$/cancelRequest", map[string]any{"id": "never-sent"})
	h.expectSilence(50 * time.Millisecond)
}

func TestNotificationsAreNeverAnswered(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	for _, frame := range []string{
		`{"jsonrpc":"2.0","method":"$/unknown","params":{}}`,
		`{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}`,
		`{"jsonrpc":"2.0","method":"no/such/notification"}`,
		`{"jsonrpc":"2.0","method":"initialized"}`,
		`{"jsonrpc":"2.0","method":"test/echo","params":{"message":"a request method sent as a notification"}}`,
	} {
		h.send(frame + "\n")
	}
	h.expectSilence(100 * time.Millisecond)
	// A registered notification handler runs (and its own notification is the only output).
	h.notify("test/note", map[string]any{"message": "ack"})
	f := h.next(time.Second)
	if f["method"] != "test/noted" || f["id"] != nil {
		t.Fatalf("got %v, want the handler's test/noted notification", f)
	}
}

func TestConcurrentAndSerialDispatch(t *testing.T) {
	for _, serial := range []bool{false, true} {
		t.Run(fmt.Sprintf("serial=%v", serial), func(t *testing.T) {
			p := testPlugin()
			p.Serial = serial
			h := startHost(t, p)
			h.initialize()
			slow := h.sendRequest("test/sleep", map[string]any{"ms": 200})
			fast := h.sendRequest("test/echo", map[string]any{"message": "fast"})
			var order []int
			for len(order) < 2 {
				if id, ok := h.next(2 * time.Second)["id"].(float64); ok {
					order = append(order, int(id))
				}
			}
			want := []int{fast, slow}
			if serial {
				want = []int{slow, fast}
			}
			if order[0] != want[0] {
				t.Fatalf("response order %v, want %v", order, want)
			}
		})
	}
}

func TestProgressAndNullResult(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	id := h.sendRequest("test/sleep", map[string]any{"ms": 1})
	f := h.next(time.Second)
	if f["method"] != "$/progress" {
		t.Fatalf("first frame %v, want $/progress", f)
	}
	params := f["params"].(map[string]any)
	if params["id"] != float64(id) || params["value"] == nil {
		t.Fatalf("$/progress params = %v", params)
	}
	h.await(id)
	// A nil result is sent as "result": null, not omitted.
	h.send(`{"jsonrpc":"2.0","id":"n","method":"test/null"}` + "\n")
	for {
		f := h.next(time.Second)
		if f["id"] == "n" {
			if r, ok := f["result"]; !ok || r != nil {
				t.Fatalf("null result frame = %v", f)
			}
			break
		}
	}
}

func TestPeerNotifyFromManyGoroutines(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	const streams, each = 8, 200
	for range streams {
		h.sendRequest("test/stream", map[string]any{"count": each})
	}
	seqs := map[float64][]float64{}
	total := 0
	for total < streams*each {
		f := h.next(5 * time.Second)
		if f["__invalid"] != nil {
			t.Fatalf("interleaved frame: %v", f["__invalid"])
		}
		if f["method"] == "test/event" {
			p := f["params"].(map[string]any)
			seqs[p["id"].(float64)] = append(seqs[p["id"].(float64)], p["seq"].(float64))
			total++
		}
	}
	for id, s := range seqs {
		for i, v := range s {
			if v != float64(i) {
				t.Fatalf("stream %v out of order at %d: %v", id, i, s[:i+1])
			}
		}
	}
}

func TestIDsEchoedVerbatim(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	ids := []string{`"abc"`, `"a\u0062c"`, `18446744073709551616`, `-7`, `1.5e3`, `0`, `"17"`}
	for _, id := range ids {
		h.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"$/ping"}` + "\n")
	}
	for _, id := range ids {
		raw := h.next(time.Second)["__raw"].(string)
		want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`
		if raw != want {
			t.Errorf("got %s, want %s", raw, want)
		}
	}
}

// A stream's first notification never overtakes its request's ack: every
// time, not by luck.
func TestStreamStartsAfterTheAck(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	for range 20 {
		id := openTail(t, h)
		h.notify("$/cancelRequest", map[string]any{"id": id})
		for n := h.next(time.Second); n["method"] != "test/stopped"; n = h.next(time.Second) {
		}
	}
}

// openTail opens a test/tail stream and checks that its ack came before
// its first tick; it returns the request id.
func openTail(t *testing.T, h *pipeHost) int {
	t.Helper()
	id := h.sendRequest("test/tail", map[string]any{"message": "ok"})
	first := h.next(time.Second)
	if got, _ := first["id"].(float64); int(got) != id {
		t.Fatalf("first frame %v, want the ack of %d", first, id)
	}
	if n := h.next(time.Second); n["method"] != "test/tick" {
		t.Fatalf("after the ack came %v, want test/tick", n)
	}
	return id
}

// A request id that is still in flight is refused (-32600 carrying that
// id); the original request is answered normally, and once it is, the id
// may be used again.
func TestDuplicateInFlightID(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	h.send(`{"jsonrpc":"2.0","id":"dup","method":"test/sleep","params":{"ms":200}}` + "\n")
	h.send(`{"jsonrpc":"2.0","id":"dup","method":"test/echo","params":{"message":"second"}}` + "\n")
	var frames []map[string]any
	for len(frames) < 2 {
		if f := h.next(2 * time.Second); f["id"] == "dup" {
			frames = append(frames, f)
		}
	}
	code, msg, cat := errCode(t, frames[0])
	if code != CodeInvalidRequest || cat != "protocol" || !strings.Contains(msg, `"dup" is already in flight`) {
		t.Fatalf("duplicate id answered %d/%s %q", code, cat, msg)
	}
	if r := result(t, frames[1]); r["slept_ms"] != float64(200) {
		t.Fatalf("the original request was answered %v", frames[1])
	}
	h.send(`{"jsonrpc":"2.0","id":"dup","method":"test/echo","params":{"message":"again"}}` + "\n")
	if f := h.next(time.Second); f["id"] != "dup" || result(t, f)["message"] != "again" {
		t.Fatalf("reused id after the answer: %v", f)
	}
}

// $/progress is sent only to a host that declared progress support in
// initialize; the request's own answer is the same either way.
func TestProgressOnlyWhenTheHostAdvertisedIt(t *testing.T) {
	for _, progress := range []bool{true, false} {
		t.Run(fmt.Sprintf("progress=%v", progress), func(t *testing.T) {
			h := startHost(t, testPlugin())
			resp := h.call("initialize", map[string]any{
				"protocol_version": "1.1.0",
				"host_info":        map[string]any{"name": "animus", "version": "0.6.33"},
				"capabilities":     map[string]any{"streaming": true, "progress": progress, "cancellation": true},
			})
			result(t, resp)
			id := h.sendRequest("test/sleep", map[string]any{"ms": 1})
			var sawProgress bool
			for {
				f := h.next(time.Second)
				if f["method"] == "$/progress" {
					sawProgress = true
					continue
				}
				if got, _ := f["id"].(float64); int(got) == id {
					if r := result(t, f); r["slept_ms"] != float64(1) {
						t.Fatalf("result %v", f)
					}
					break
				}
			}
			if sawProgress != progress {
				t.Fatalf("host progress=%v: plugin sent $/progress=%v", progress, sawProgress)
			}
		})
	}
}

// Stream: the ack comes first, $/cancelRequest after the ack stops the
// stream (and only it), and a request that fails still lets its stream
// release what it holds, without sending anything.
func TestStreamCancelledByCancelRequestAfterAck(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	id := openTail(t, h)
	h.notify("$/cancelRequest", map[string]any{"id": id})
	deadline := time.Now().Add(2 * time.Second)
	for {
		n := h.next(time.Until(deadline))
		if n["method"] == "test/stopped" {
			break
		}
		if n["method"] != "test/tick" {
			t.Fatalf("while stopping came %v", n)
		}
	}
	h.expectSilence(50 * time.Millisecond) // no tick after test/stopped, no response to the cancel

	errCode(t, h.call("test/tail", map[string]any{"message": "fail"}))
	h.expectSilence(30 * time.Millisecond)
	if r := h.call("test/released", nil); r["result"] != float64(1) {
		t.Fatalf("a failed request's stream released %v times, want 1", r["result"])
	}
}

// Peer.ErrorObject is exactly the error a response would carry, so a
// stream's {id, error} notification and an error response cannot differ.
func TestPeerErrorObjectMatchesTheResponse(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	params := map[string]any{"message": "TASK-9"}
	failed := h.call("test/fail", params)
	object := h.call("test/fail-object", params)
	want, _ := json.Marshal(failed["error"])
	got, _ := json.Marshal(object["result"])
	if string(got) != string(want) || !strings.Contains(string(got), "not_found") {
		t.Fatalf("ErrorObject %s, want the response's error %s", got, want)
	}
}

// A $/cancelRequest sent the moment the ack arrives always reaches the
// stream: the stream is registered under the id before the ack is
// written, not after.
func TestCancelRightAfterTheAckStopsTheStream(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	for range 30 {
		id := h.sendRequest("test/tail", map[string]any{"message": "ok"})
		if f := h.next(time.Second); f["id"] != float64(id) {
			t.Fatalf("first frame %v, want the ack of %d", f, id)
		}
		h.notify("$/cancelRequest", map[string]any{"id": id})
		deadline := time.Now().Add(2 * time.Second)
		for n := h.next(time.Until(deadline)); n["method"] != "test/stopped"; n = h.next(time.Until(deadline)) {
		}
	}
}
