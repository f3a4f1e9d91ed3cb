package pluginkittest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// Frame is one frame the plugin wrote, decoded enough to route it.
type Frame struct {
	Raw    []byte
	ID     json.RawMessage // compact; nil for a notification
	Method string          // a notification's method
	Params json.RawMessage
	Result json.RawMessage
	Error  *RPCError
}

// RPCError is an error response's error object as the host reads it.
type RPCError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("%d %s %v", e.Code, e.Message, e.Data)
}

// Category is data.category, or "".
func (e *RPCError) Category() string {
	c, _ := e.Data["category"].(string)
	return c
}

// Field is data.field (the offending params field), or "".
func (e *RPCError) Field() string {
	f, _ := e.Data["field"].(string)
	return f
}

// AsRPCError finds the error response in err (as Call returns it).
func AsRPCError(err error) (*RPCError, bool) {
	var e *RPCError
	ok := errors.As(err, &e)
	return e, ok
}

// IsNotification reports whether the frame is a notification (a method
// and no id).
func (f Frame) IsNotification() bool { return f.ID == nil && f.Method != "" }

// envelope assembles a frame by hand, so raw params reach the plugin
// byte for byte (json.Marshal would compact them and escape "<").
func envelope(id json.RawMessage, method string, params any) ([]byte, error) {
	name, err := json.Marshal(method)
	if err != nil {
		return nil, err
	}
	raw, err := rawJSON(params)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0"`)
	if id != nil {
		b.WriteString(`,"id":`)
		b.Write(id)
	}
	b.WriteString(`,"method":`)
	b.Write(name)
	if len(raw) > 0 {
		b.WriteString(`,"params":`)
		b.Write(raw)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// rawJSON is v as the bytes to send: raw values as given, nil (or any
// nil pointer, map or slice) as nothing, anything else marshalled.
func rawJSON(v any) ([]byte, error) {
	switch p := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	case []byte:
		return p, nil
	case string:
		return []byte(p), nil
	}
	if rv := reflect.ValueOf(v); (rv.Kind() == reflect.Map || rv.Kind() == reflect.Slice || rv.Kind() == reflect.Pointer) && rv.IsNil() {
		return nil, nil
	}
	return json.Marshal(v)
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
