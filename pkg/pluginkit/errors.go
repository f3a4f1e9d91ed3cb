package pluginkit

import (
	"context"
	"errors"
	"fmt"
)

// JSON-RPC and Animus error codes (spec §4). Kind-specific codes (queue
// -322xx, durable store -323xx) are set with Error.WithCode.
const (
	CodeParseError        = -32700
	CodeInvalidRequest    = -32600
	CodeMethodNotFound    = -32601
	CodeInvalidParams     = -32602
	CodeInternalError     = -32603
	CodeNotInitialized    = -32000
	CodeMethodUnsupported = -32001
	CodeRequestCancelled  = -32002
	CodeTimeout           = -32003
)

// Category is the value of data.category on every error pluginkit sends.
// Hosts branch on codes; operators and clients read the category.
type Category string

// The categories. The Animus backend crates spell "method not supported"
// two ways (subject: unsupported, trigger/log/notifier: not_supported); both
// are kept so each kind can speak its own dialect.
const (
	CategoryParseError       Category = "parse_error"
	CategoryProtocol         Category = "protocol"
	CategoryMethodNotFound   Category = "method_not_found"
	CategoryInvalidRequest   Category = "invalid_request"
	CategoryNotFound         Category = "not_found"
	CategoryPermissionDenied Category = "permission_denied"
	CategoryConflict         Category = "conflict"
	CategoryUnavailable      Category = "unavailable"
	CategoryQuotaExceeded    Category = "quota_exceeded"
	CategoryAddressInUse     Category = "address_in_use"
	CategoryNotInitialized   Category = "not_initialized"
	CategoryNotSupported     Category = "not_supported"
	CategoryUnsupported      Category = "unsupported"
	CategoryCancelled        Category = "cancelled"
	CategoryTimeout          Category = "timeout"
	CategoryOther            Category = "other"
	CategoryInternal         Category = "internal"
)

// categoryCodes is the one table from category to JSON-RPC code. It follows
// host-and-lifecycle §11.2: Animus backends report bad input and missing
// objects as -32602 and backend failures as -32603.
var categoryCodes = map[Category]int{
	CategoryParseError:       CodeParseError,
	CategoryProtocol:         CodeInvalidRequest,
	CategoryPermissionDenied: CodeInvalidRequest,
	CategoryMethodNotFound:   CodeMethodNotFound,
	CategoryInvalidRequest:   CodeInvalidParams,
	CategoryNotFound:         CodeInvalidParams,
	CategoryConflict:         CodeInternalError,
	CategoryUnavailable:      CodeInternalError,
	CategoryQuotaExceeded:    CodeInternalError,
	CategoryAddressInUse:     CodeInternalError,
	CategoryOther:            CodeInternalError,
	CategoryInternal:         CodeInternalError,
	CategoryNotInitialized:   CodeNotInitialized,
	CategoryNotSupported:     CodeMethodUnsupported,
	CategoryUnsupported:      CodeMethodUnsupported,
	CategoryCancelled:        CodeRequestCancelled,
	CategoryTimeout:          CodeTimeout,
}

// codeOf returns the JSON-RPC code for a category (-32603 for an unknown one).
func codeOf(c Category) int {
	if code, ok := categoryCodes[c]; ok {
		return code
	}
	return CodeInternalError
}

// Error is the one error type of the protocol. Message and Data go on the
// wire; the wrapped cause is logged on stderr and never sent, so SQL, file
// paths and secrets stay out of responses.
type Error struct {
	Code     int
	Category Category
	Message  string
	// Data holds extra keys for error.data beside "category" (for example
	// the queue's actual_state). Values must marshal to JSON.
	Data  map[string]any
	cause error
}

// Errorf builds an Error of category c with the code from the category table.
func Errorf(c Category, format string, args ...any) *Error {
	return &Error{Code: codeOf(c), Category: c, Message: fmt.Sprintf(format, args...)}
}

// InvalidParams reports bad input: -32602, category invalid_request.
func InvalidParams(format string, args ...any) *Error {
	return Errorf(CategoryInvalidRequest, format, args...)
}

// NotFound reports a missing object as the backend crates do: "not found: …".
func NotFound(format string, args ...any) *Error {
	return Errorf(CategoryNotFound, "not found: "+format, args...)
}

// Unavailable reports a backend that cannot serve: "backend unavailable: …".
func Unavailable(format string, args ...any) *Error {
	return Errorf(CategoryUnavailable, "backend unavailable: "+format, args...)
}

// QuotaExceeded reports an upstream rate or size limit: "quota exceeded: …".
func QuotaExceeded(format string, args ...any) *Error {
	return Errorf(CategoryQuotaExceeded, "quota exceeded: "+format, args...)
}

// Internal hides cause behind a generic message. The cause is logged with
// the request, and its redacted summary becomes health/check's last_error.
func Internal(cause error) *Error {
	return &Error{Code: CodeInternalError, Category: CategoryInternal, Message: "internal error", cause: cause}
}

func (e *Error) Error() string {
	if e.cause != nil {
		return e.Message + ": " + e.cause.Error()
	}
	return e.Message
}

// Unwrap exposes the cause to errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.cause }

// WithCode returns a copy with a kind-specific code (queue, durable store).
func (e *Error) WithCode(code int) *Error {
	c := *e
	c.Code = code
	return &c
}

// WithData returns a copy with one more key in error.data.
func (e *Error) WithData(key string, value any) *Error {
	c := *e
	c.Data = make(map[string]any, len(e.Data)+1)
	for k, v := range e.Data {
		c.Data[k] = v
	}
	c.Data[key] = value
	return &c
}

// Wrap returns a copy that carries cause for the log, not for the wire.
func (e *Error) Wrap(cause error) *Error {
	c := *e
	c.cause = cause
	return &c
}

// ErrorObject is the JSON-RPC error object as it goes on the wire: in an
// error response, and inside a stream's failure notification ({id, error}),
// which Peer.ErrorObject builds.
type ErrorObject struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// toWire is the one function that decides what the host sees for an error a
// handler returned. An *Error anywhere in the chain keeps its code and
// message; context errors become cancelled/timeout; anything else is an
// internal error with a generic message. The second result reports whether
// the error is internal (logged and recorded as last_error).
func toWire(err error, scrub func(string) string) (ErrorObject, bool) {
	var e *Error
	switch {
	case errors.As(err, &e):
	case errors.Is(err, context.DeadlineExceeded):
		e = Errorf(CategoryTimeout, "request timed out")
	case errors.Is(err, context.Canceled):
		e = Errorf(CategoryCancelled, "request cancelled")
	default:
		e = Internal(err)
	}
	data := make(map[string]any, len(e.Data)+1)
	for k, v := range e.Data {
		data[k] = v
	}
	category := e.Category
	if category == "" {
		category = CategoryOther
	}
	data["category"] = category
	code := e.Code
	if code == 0 {
		code = codeOf(category)
	}
	internal := code == CodeInternalError && (category == CategoryInternal || category == CategoryOther)
	return ErrorObject{Code: code, Message: scrub(e.Message), Data: data}, internal
}
