package pluginkit

import (
	"bytes"
	"encoding/json"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
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
	if !in.scan(frame) {
		in = inbound{}
		if err := json.Unmarshal(frame, &in); err != nil {
			return nil, &envelopeError{msg: "invalid request: " + err.Error()}
		}
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

// Frames are assembled by hand around encoded values: the envelope's key
// order is fixed (jsonrpc, id, result|error) and the id is the host's
// bytes, verbatim.

func responseFrame(id json.RawMessage, result any) ([]byte, error) {
	if id == nil {
		id = nullID
	}
	return encodeFrame([]byte(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":`), result)
}

func errorFrame(id json.RawMessage, we ErrorObject) []byte {
	if id == nil {
		id = nullID
	}
	prefix := []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":`)
	frame, err := encodeFrame(prefix, we)
	if err != nil { // data that cannot be encoded: send what toWire makes of that instead
		we, _ = toWire(Internal(err), func(s string) string { return s })
		frame, _ = encodeFrame(prefix, we)
	}
	return frame
}

func notificationFrame(method string, params any) ([]byte, error) {
	name, err := rustjson.Marshal(method)
	if err != nil {
		return nil, err
	}
	prefix := []byte(`{"jsonrpc":"2.0","method":` + string(name))
	if params == nil {
		return append(prefix, "}\n"...), nil
	}
	return encodeFrame(append(prefix, `,"params":`...), params)
}

// encodeFrame returns prefix + v as compact JSON + "}\n". The encoder hands
// its whole output to Write at once, so the frame is allocated exactly
// once at its final size; a 16 MiB result is not copied twice more.
func encodeFrame(prefix []byte, v any) ([]byte, error) {
	w := &frameBuilder{prefix: prefix}
	if err := rustjson.Encode(w, v); err != nil {
		return nil, err
	}
	return w.frame, nil
}

type frameBuilder struct {
	prefix, frame []byte
}

func (w *frameBuilder) Write(p []byte) (int, error) {
	p = bytes.TrimSuffix(p, []byte("\n")) // Encode ends every value with a newline
	frame := make([]byte, 0, len(w.prefix)+len(w.frame)+len(p)+2)
	frame = append(frame, w.prefix...)
	frame = append(frame, p...)
	w.frame = append(frame, "}\n"...)
	return len(p) + 1, nil
}
