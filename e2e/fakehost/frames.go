package fakehost

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// handleFrame classifies one complete JSON object from stdout, the way the
// daemon does (a frame with an "id" key is a response, one without is a
// notification), and records every wire-rule breach as a violation. Unlike
// the daemon it still delivers a malformed response to its waiter, so a test
// sees the violation instead of a 30 s timeout.
func (h *Host) handleFrame(raw []byte) {
	h.logWire("<<", raw)
	var env map[string]json.RawMessage
	if err := json.Unmarshal(raw, &env); err != nil {
		h.violate("undecodable frame: %v: %s", err, clip(raw, garbageClip))
		return
	}
	if h.cfg.Schemas != nil {
		if err := h.cfg.Schemas.ValidateFrame(raw); err != nil {
			h.violate("frame schema: %v", err)
		}
	}
	if v, ok := env["jsonrpc"]; !ok || string(v) != `"2.0"` {
		h.violate(`frame lacks "jsonrpc":"2.0": %s`, clip(raw, garbageClip))
	}
	idRaw, hasID := env["id"]
	_, hasMethod := env["method"]
	_, hasResult := env["result"]
	_, hasError := env["error"]
	switch {
	case hasID && hasMethod:
		h.violate("plugin sent a request (plugin→host requests are unsupported; the daemon would take it as a response): %s", clip(raw, garbageClip))
	case hasID:
		h.handleResponse(raw, idRaw, env)
	case hasMethod:
		h.handleNotification(raw, env)
	case hasResult || hasError:
		h.violate("response without an id (a reply to a notification?): %s", clip(raw, garbageClip))
	default:
		h.violate("frame has neither id nor method: %s", clip(raw, garbageClip))
	}
	h.broadcast()
}

func (h *Host) handleResponse(raw []byte, idRaw json.RawMessage, env map[string]json.RawMessage) {
	key, err := compactID(idRaw)
	if err != nil {
		key = string(idRaw)
	}
	resp := &Response{ID: json.RawMessage(key), Raw: raw, At: time.Now()}
	result, hasResult := env["result"]
	errRaw, hasError := env["error"]
	// serde reads "error": null as no error, so only a non-null one counts.
	hasError = hasError && string(errRaw) != "null"
	switch {
	case hasResult && hasError:
		h.violate("response id %s has both result and error", key)
	case !hasResult && !hasError:
		h.violate("response id %s has neither result nor error", key)
	}
	if hasResult {
		resp.Result = result
	}
	if hasError {
		resp.Error = &RPCError{}
		if err := json.Unmarshal(errRaw, resp.Error); err != nil {
			h.violate("response id %s: error object does not decode: %v", key, err)
		}
	}

	// Validate before the response is published: a waiter woken by any
	// other event must not see the response without its violation.
	h.mu.Lock()
	method, known := h.sent[key]
	h.mu.Unlock()
	if known && hasResult && h.cfg.Schemas != nil {
		if err := h.cfg.Schemas.ValidateResult(method, result); err != nil {
			h.violate("%v", err)
		}
	}

	h.mu.Lock()
	resp.Method = method
	if h.captureFirstID && h.firstIDFrame == nil {
		h.firstIDFrame = resp // the testkit takes the first id-bearing frame, whatever its id
	}
	flagged := false
	if !h.initReplied {
		if h.initID != "" && key == h.initID {
			h.initReplied = true
		} else if !known {
			h.violateLocked("id-bearing frame (id %s) before the initialize reply; the testkit would take it as that reply: %s", key, clip(raw, garbageClip))
			flagged = true
		}
	}
	switch {
	case !known && !flagged:
		h.violateLocked("response id %s matches no request sent: %s", key, clip(raw, garbageClip))
	case known && h.responses[key] != nil:
		h.violateLocked("second response for id %s: %s", key, clip(raw, garbageClip))
	case known:
		h.responses[key] = resp
	}
	h.mu.Unlock()

}

func (h *Host) handleNotification(raw []byte, env map[string]json.RawMessage) {
	var method string
	if err := json.Unmarshal(env["method"], &method); err != nil {
		h.violate("notification method is not a string: %s", clip(raw, garbageClip))
		return
	}
	n := Notification{Method: method, Params: env["params"], Raw: raw, At: time.Now()}
	if h.cfg.Schemas != nil { // before publishing, as for responses
		if err := h.cfg.Schemas.ValidateNotification(method, n.Params); err != nil {
			h.violate("%v", err)
		}
	}
	h.mu.Lock()
	h.notifications = append(h.notifications, n)
	h.mu.Unlock()
}

func (h *Host) handleGarbage(b []byte) {
	h.logWire("<<", append([]byte("[non-JSON] "), b...))
	h.violate("non-JSON bytes on stdout: %q", b)
	h.broadcast()
}

func (h *Host) violate(format string, args ...any) {
	h.mu.Lock()
	h.violateLocked(format, args...)
	h.mu.Unlock()
}

func (h *Host) violateLocked(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	h.violations = append(h.violations, msg)
	h.wire = append(h.wire, stamp(time.Now())+" !! "+msg)
}

// wireLogClip keeps huge frames from drowning the log a failing test prints.
const wireLogClip = 64 << 10

func (h *Host) logWire(arrow string, frame []byte) {
	s := string(frame)
	if len(s) > wireLogClip {
		s = fmt.Sprintf("%s… [%d bytes]", s[:wireLogClip], len(frame))
	}
	h.mu.Lock()
	h.wire = append(h.wire, stamp(time.Now())+" "+arrow+" "+s)
	h.mu.Unlock()
}

func stamp(t time.Time) string { return t.Format("15:04:05.000000") }

// WireLog returns every frame in both directions, timestamped: ">>" host to
// plugin, "<<" plugin to host, "!!" a violation at the point it was seen.
func (h *Host) WireLog() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.wire, "\n")
}

// WireLines returns the wire log entries from index from on, and the index
// to pass next time, so a narrator can print each step's frames as it goes.
func (h *Host) WireLines(from int) ([]string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if from > len(h.wire) {
		from = len(h.wire)
	}
	return append([]string(nil), h.wire[from:]...), len(h.wire)
}

// Violations returns the wire-rule breaches recorded so far.
func (h *Host) Violations() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.violations...)
}

// ExpectNoViolations fails t if any violation was recorded.
func (h *Host) ExpectNoViolations(t testing.TB) {
	t.Helper()
	if v := h.Violations(); len(v) > 0 {
		t.Errorf("fakehost: %d protocol violation(s):\n  %s", len(v), strings.Join(v, "\n  "))
	}
}

// Notifications returns every notification received so far, in order.
func (h *Host) Notifications() []Notification {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Notification(nil), h.notifications...)
}

// WaitNotification returns the first notification (already received or
// still to come) for which match is true. Without a ctx deadline it waits
// 10 s. match must not call back into the Host.
func (h *Host) WaitNotification(ctx context.Context, match func(Notification) bool) (Notification, error) {
	ctx, cancel := withDefaultTimeout(ctx, 10*time.Second)
	defer cancel()
	var found *Notification
	var lost error
	seen := 0
	err := h.waitFor(ctx, func() bool {
		for ; seen < len(h.notifications); seen++ {
			if match(h.notifications[seen]) {
				n := h.notifications[seen]
				found = &n
				return true
			}
		}
		lost = h.lost
		return lost != nil
	})
	switch {
	case found != nil:
		return *found, nil
	case lost != nil:
		return Notification{}, fmt.Errorf("%w: no matching notification: %v", ErrConnectionLost, lost)
	default:
		return Notification{}, fmt.Errorf("fakehost: no matching notification: %w", err)
	}
}
