package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/plugins/transport-http/internal/control"
)

// apiError is every failure a client can see. Code is a stable machine
// string (the reference transport's codes are kept: daemon_unreachable,
// wire_error, invalid_input, not_implemented); Category is the daemon's
// data.category for daemon errors, or the transport's own.
type apiError struct {
	Status   int    `json:"-"`
	Category string `json:"category"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	// RPCCode is the daemon's JSON-RPC code, for daemon errors only.
	RPCCode int `json:"rpc_code,omitempty"`
}

func (e *apiError) Error() string { return e.Message }

func newError(status int, category, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Category: category, Code: code, Message: fmt.Sprintf(format, args...)}
}

// badInput is a 400 for input the transport itself rejects, before any call.
func badInput(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, "invalid_request", "invalid_input", format, args...)
}

// categoryStatus is the honest HTTP status of each control error category
// (issue #9: not_found 404, invalid_request 400, permission_denied 403,
// conflict 409, not_supported 501, unavailable 503, internal 500).
var categoryStatus = map[string]int{
	"not_found":         http.StatusNotFound,
	"invalid_request":   http.StatusBadRequest,
	"permission_denied": http.StatusForbidden,
	"conflict":          http.StatusConflict,
	"not_supported":     http.StatusNotImplemented,
	"unavailable":       http.StatusServiceUnavailable,
	"internal":          http.StatusInternalServerError,
}

// codeCategory covers the errors the daemon sends without data.category
// (transport-http.md §1.1, §1.6).
func codeCategory(code int) string {
	switch code {
	case -32602, -32600:
		return "invalid_request"
	case -32601, -32001:
		return "not_supported"
	default:
		return "internal"
	}
}

// fromControl maps a control-client failure to what the HTTP client sees.
func fromControl(method string, err error) *apiError {
	var rpc *control.RPCError
	switch {
	case errors.As(err, &rpc):
		category := rpc.Category
		if category == "" {
			category = codeCategory(rpc.Code)
		}
		status, ok := categoryStatus[category]
		if !ok {
			status = http.StatusInternalServerError
		}
		code := category
		if rpc.Code == -32601 {
			code = "unknown_method" // an older daemon without this method
		}
		return &apiError{Status: status, Category: category, Code: code, Message: rpc.Message, RPCCode: rpc.Code}
	case errors.Is(err, control.ErrUnreachable):
		return newError(http.StatusServiceUnavailable, "unavailable", "daemon_unreachable",
			"could not reach the animus daemon: its control socket is not accepting connections")
	case errors.Is(err, control.ErrConnectionLost):
		return newError(http.StatusBadGateway, "unavailable", "wire_error",
			"the daemon connection closed before %s was answered", method)
	case errors.Is(err, context.DeadlineExceeded):
		return newError(http.StatusGatewayTimeout, "timeout", "daemon_timeout",
			"the daemon did not answer %s in time", method)
	case errors.Is(err, control.ErrClosed):
		return newError(http.StatusServiceUnavailable, "unavailable", "shutting_down", "the transport is shutting down")
	case errors.Is(err, context.Canceled):
		return newError(http.StatusServiceUnavailable, "unavailable", "cancelled", "the request was cancelled")
	}
	return newError(http.StatusInternalServerError, "internal", "internal", "internal error")
}

type okEnvelope struct {
	OK   bool            `json:"ok"`
	Data json.RawMessage `json:"data"`
}

type errEnvelope struct {
	OK    bool      `json:"ok"`
	Error *apiError `json:"error"`
}

// writeOK sends 200 {"ok":true,"data":<raw>}; the daemon's result is passed
// through byte for byte.
//
// It writes the bytes rustjson.Encode would write for okEnvelope (compacted
// data, no HTML escaping, a trailing newline) without the reflection and
// encoder state: this is the path of every successful call.
func writeOK(w http.ResponseWriter, data json.RawMessage) {
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	out := bytes.NewBuffer(make([]byte, 0, len(okPrefix)+len(data)+2))
	out.WriteString(okPrefix)
	err := json.Compact(out, data)
	jsonHeaders(w)
	w.WriteHeader(http.StatusOK)
	if err != nil {
		return // as rustjson.Encode: an invalid value writes no body
	}
	out.WriteString("}\n")
	_, _ = w.Write(out.Bytes()) // one Write; the client going away is not our error
}

// okPrefix is okEnvelope's encoding up to its data.
const okPrefix = `{"ok":true,"data":`

// writeData marshals v as the data of a success envelope.
func writeData(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeErr(w, newError(http.StatusInternalServerError, "internal", "internal", "internal error"))
		return
	}
	writeOK(w, b)
}

func writeErr(w http.ResponseWriter, e *apiError) {
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="animus"`)
	}
	writeJSON(w, e.Status, errEnvelope{OK: false, Error: e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	jsonHeaders(w)
	w.WriteHeader(status)
	_ = rustjson.Encode(w, v) // one Write; the client going away is not our error
}

// jsonHeaders are the headers of every JSON response.
func jsonHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
}
