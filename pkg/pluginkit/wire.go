package pluginkit

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ProtocolVersion is the plugin protocol version pluginkit speaks. Hosts
// compare only the major (host-and-lifecycle §1).
const ProtocolVersion = "1.1.0"

// inbound is one decoded frame from the host. Every field is kept raw so
// that a field of the wrong type is reported as -32600 rather than failing
// the whole decode, and so that the id is echoed back byte for byte.
type inbound struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      aliasRaw        `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  aliasRaw        `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`

	hasID  bool
	method string
}

// aliasRaw is a json.RawMessage that aliases the input instead of copying
// it. The reader hands every frame buffer over for good, so aliasing is safe
// and saves a copy of a 16 MiB params value.
type aliasRaw []byte

func (a *aliasRaw) UnmarshalJSON(b []byte) error {
	*a = b
	return nil
}

// envelopeError is a frame that is JSON but not a usable message.
type envelopeError struct {
	id  json.RawMessage // echoed when it was valid, else null
	msg string
}

// decodeInbound parses a frame into a request, a notification, or a
// response from the host. It returns an *envelopeError for values that are
// not JSON-RPC 2.0 messages.
func decodeInbound(frame []byte) (*inbound, *envelopeError) {
	frame = bytes.TrimSpace(frame)
	if len(frame) == 0 || frame[0] != '{' {
		return nil, &envelopeError{msg: "invalid request: a frame must be a JSON-RPC request object"}
	}
	var in inbound
	if err := json.Unmarshal(frame, &in); err != nil {
		return nil, &envelopeError{msg: "invalid request: " + err.Error()}
	}
	in.hasID = in.ID != nil
	var id json.RawMessage
	if in.hasID {
		if !validID(in.ID) {
			return nil, &envelopeError{msg: "invalid request: id must be a string or a number"}
		}
		id = json.RawMessage(in.ID)
	}
	if string(in.JSONRPC) != `"2.0"` {
		return nil, &envelopeError{id: id, msg: `invalid request: "jsonrpc" must be "2.0"`}
	}
	if in.Method == nil {
		if in.hasID && (in.Result != nil || in.Error != nil) {
			return &in, nil // a response; pluginkit sends no requests, so it is logged and dropped
		}
		return nil, &envelopeError{id: id, msg: `invalid request: "method" is required`}
	}
	if err := json.Unmarshal(in.Method, &in.method); err != nil || in.method == "" {
		return nil, &envelopeError{id: id, msg: `invalid request: "method" must be a non-empty string`}
	}
	if p := bytes.TrimSpace(in.Params); len(p) > 0 {
		switch p[0] {
		case '{', '[':
		case 'n': // null is the same as absent (input leniency)
			in.Params = nil
		default:
			return nil, &envelopeError{id: id, msg: `invalid request: "params" must be an object or an array`}
		}
	}
	return &in, nil
}

func validID(id []byte) bool {
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"':
		return true
	case c == '-' || (c >= '0' && c <= '9'):
		return true
	}
	return false
}

var nullID = json.RawMessage("null")

// Frames are assembled by hand around pre-encoded values: the envelope's
// key order is fixed (jsonrpc, id, result|error) and the id is the host's
// bytes, verbatim.

func responseFrame(id json.RawMessage, result []byte) []byte {
	if id == nil {
		id = nullID
	}
	b := make([]byte, 0, len(result)+len(id)+32)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, "}\n"...)
}

func errorFrame(id json.RawMessage, we wireError) []byte {
	if id == nil {
		id = nullID
	}
	body, err := marshal(we)
	if err != nil { // unmarshalable data: drop it rather than lose the error
		we.Data = map[string]any{"category": CategoryInternal}
		body, _ = marshal(we)
	}
	b := make([]byte, 0, len(body)+len(id)+32)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = append(b, body...)
	return append(b, "}\n"...)
}

func notificationFrame(method string, params []byte) ([]byte, error) {
	name, err := marshal(method)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(params)+len(name)+40)
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = append(b, name...)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, "}\n"...), nil
}

// marshal encodes v compactly without HTML escaping, as serde_json does
// (host-and-lifecycle §12). Compact output never contains a raw newline,
// even for json.RawMessage values, which encoding/json compacts.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
