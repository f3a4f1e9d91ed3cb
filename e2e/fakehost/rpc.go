package fakehost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrConnectionLost is returned for requests on a host whose plugin stdout is
// gone, or after `exit` was sent (the daemon marks the host dead there).
var ErrConnectionLost = errors.New("fakehost: connection lost")

// ErrStdinClosed is returned by writes after CloseStdin.
var ErrStdinClosed = errors.New("fakehost: stdin closed")

// Timeouts the daemon applies when a caller gives none.
const (
	DefaultCallTimeout  = 30 * time.Second // untimed path: 30 s write deadline
	DefaultWriteTimeout = 30 * time.Second
)

// Response is one plugin→host frame with an id.
type Response struct {
	ID     json.RawMessage // compact
	Result json.RawMessage // nil when absent; "null" when sent as null
	Error  *RPCError
	Raw    []byte
	Method string // method of the request it answers ("" if none matched)
	At     time.Time
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message) }

// Category returns data.category, the string Animus backends put in error
// data, or "" when there is none.
func (e *RPCError) Category() string {
	var d struct {
		Category string `json:"category"`
	}
	if e == nil || len(e.Data) == 0 || json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return d.Category
}

// Notification is one plugin→host frame without an id.
type Notification struct {
	Method string
	Params json.RawMessage
	Raw    []byte
	At     time.Time
}

// Call sends a request with the next integer id (1, 2, 3, ... per process,
// skipping ids already used by Request) and waits for its response. params
// nil omits the "params" key; a json.RawMessage is sent verbatim. Without a
// ctx deadline the daemon's 30 s applies.
func (h *Host) Call(ctx context.Context, method string, params any) (*Response, error) {
	return h.Request(ctx, h.allocID(), method, params)
}

func (h *Host) allocID() json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		h.nextID++
		id := strconv.FormatInt(h.nextID, 10)
		if _, used := h.sent[id]; !used {
			return json.RawMessage(id)
		}
	}
}

// Request sends a request with an explicit id (string ids, big numbers, ...)
// and waits for the response with exactly that id.
func (h *Host) Request(ctx context.Context, id json.RawMessage, method string, params any) (*Response, error) {
	key, err := compactID(id)
	if err != nil {
		return nil, err
	}
	frame, err := buildFrame(json.RawMessage(key), method, params)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	if h.dead || h.lost != nil {
		h.mu.Unlock()
		return nil, ErrConnectionLost
	}
	if _, used := h.sent[key]; used {
		h.mu.Unlock()
		return nil, fmt.Errorf("fakehost: request id %s already used", key)
	}
	// Registered before writing: the reply can arrive before Write returns.
	h.register(key, method)
	h.mu.Unlock()
	if err := h.write(frame, DefaultWriteTimeout); err != nil {
		return nil, err
	}
	return h.Await(ctx, json.RawMessage(key))
}

// Expect declares that a response with id is legitimate although no request
// carried it in a form Send could recognise: the `id: null` error a plugin
// may send for an unparseable frame, or the -32600 answer to an object that
// is not a valid request. label stands in for the method (Response.Method).
// Without it such responses are reported as matching no request.
func (h *Host) Expect(id json.RawMessage, label string) {
	key, err := compactID(id)
	if err != nil {
		key = string(id)
	}
	h.mu.Lock()
	h.sent[key] = label
	h.mu.Unlock()
}

// register records an outgoing request; h.mu must be held.
func (h *Host) register(key, method string) {
	h.sent[key] = method
	if method == "initialize" && h.initID == "" {
		h.initID = key
	}
}

// Await waits for the response whose compact id is byte-identical to id's.
// It returns a response that has already arrived at once.
func (h *Host) Await(ctx context.Context, id json.RawMessage) (*Response, error) {
	key, err := compactID(id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withDefaultTimeout(ctx, DefaultCallTimeout)
	defer cancel()
	var resp *Response
	var lost error
	werr := h.waitFor(ctx, func() bool {
		resp, lost = h.responses[key], h.lost
		return resp != nil || lost != nil
	})
	switch {
	case resp != nil:
		return resp, nil
	case lost != nil:
		return nil, fmt.Errorf("%w (awaiting id %s): %v", ErrConnectionLost, key, lost)
	default:
		return nil, fmt.Errorf("fakehost: no response for id %s: %w", key, werr)
	}
}

// Notify sends a notification (no id); params nil omits the "params" key.
func (h *Host) Notify(method string, params any) error {
	return h.notify(method, params, DefaultWriteTimeout)
}

func (h *Host) notify(method string, params any, timeout time.Duration) error {
	frame, err := buildFrame(nil, method, params)
	if err != nil {
		return err
	}
	return h.write(frame, timeout)
}

// Send writes raw to stdin exactly as given (framing tests). Requests found in
// raw are registered, so their responses are matched and not reported as
// unsolicited.
func (h *Host) Send(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	h.mu.Lock()
	for {
		var f struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if dec.Decode(&f) != nil {
			break
		}
		if f.ID != nil && f.Method != nil {
			if key, err := compactID(f.ID); err == nil {
				h.register(key, *f.Method)
			}
		}
	}
	h.mu.Unlock()
	return h.write(raw, DefaultWriteTimeout)
}

// CloseStdin closes the plugin's stdin (EOF), as the testkit does to stop it.
func (h *Host) CloseStdin() error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if h.stdinClosed {
		return nil
	}
	h.stdinClosed = true
	h.logWire(">>", []byte("[stdin closed]"))
	return h.stdin.Close()
}

// write sends one frame; writes are serialised so frames never interleave,
// and each carries a deadline like the daemon's bounded writes.
func (h *Host) write(p []byte, timeout time.Duration) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if h.stdinClosed {
		return ErrStdinClosed
	}
	h.logWire(">>", bytes.TrimSuffix(p, []byte("\n")))
	// Pipes from os.Pipe are pollable on Unix, so the deadline works there;
	// elsewhere the write is simply unbounded.
	_ = h.stdin.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := h.stdin.Write(p); err != nil {
		return fmt.Errorf("fakehost: write to plugin stdin: %w", err)
	}
	return nil
}

// buildFrame renders {"jsonrpc":"2.0","id":…,"method":…,"params":…} in the
// daemon's envelope order. The id is omitted when nil (notification).
func buildFrame(id json.RawMessage, method string, params any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0"`)
	if id != nil {
		b.WriteString(`,"id":`)
		b.Write(id)
	}
	m, _ := marshalNoEscape(method)
	b.WriteString(`,"method":`)
	b.Write(m)
	p, err := encodeParams(params)
	if err != nil {
		return nil, fmt.Errorf("fakehost: params of %s: %w", method, err)
	}
	if p != nil {
		b.WriteString(`,"params":`)
		b.Write(p)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// encodeParams returns nil for "no params key"; raw JSON is kept verbatim
// (json.Marshal would re-compact it), anything else is marshalled the way
// serde_json would write it (no HTML escaping).
func encodeParams(params any) ([]byte, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(p) == 0 {
			return nil, nil
		}
		return p, nil
	}
	return marshalNoEscape(params)
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// compactID canonicalises an id for byte-exact matching: 7 and "7" differ,
// and so do 7 and 7.0, exactly as they do on the wire.
func compactID(id json.RawMessage) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, id); err != nil {
		return "", fmt.Errorf("fakehost: invalid id %q: %w", id, err)
	}
	return b.String(), nil
}
