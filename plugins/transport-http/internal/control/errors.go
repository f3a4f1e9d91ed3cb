package control

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrUnreachable means the control socket could not be dialled: the daemon
// is not running, the socket does not exist yet, or it refused us. Nothing
// was sent.
var ErrUnreachable = errors.New("control socket unreachable")

// ErrConnectionLost means the connection ended (or the daemon wrote bytes
// that are not JSON-RPC) after the request was written: the daemon may or
// may not have acted on it.
var ErrConnectionLost = errors.New("control connection lost")

// ErrClosed is returned once the Pool has been closed.
var ErrClosed = errors.New("control client closed")

// errNotSent marks a call whose request never left: the write failed, so
// retrying on another connection cannot run it twice.
var errNotSent = errors.New("request not sent")

// RPCError is an error response from the daemon. Category is data.category
// when the daemon sent one; "" for the errors it sends without data
// (-32601 unknown method, -32602 "invalid params: …", -32700 parse error).
type RPCError struct {
	Code     int
	Message  string
	Category string
	Data     json.RawMessage
}

func (e *RPCError) Error() string {
	if e.Category != "" {
		return fmt.Sprintf("control error %d (%s): %s", e.Code, e.Category, e.Message)
	}
	return fmt.Sprintf("control error %d: %s", e.Code, e.Message)
}

// wireError is the error object as the daemon writes it.
type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (w *wireError) toRPC() *RPCError {
	e := &RPCError{Code: w.Code, Message: w.Message, Data: w.Data}
	var d struct {
		Category string `json:"category"`
	}
	if len(w.Data) > 0 && json.Unmarshal(w.Data, &d) == nil {
		e.Category = d.Category
	}
	return e
}
