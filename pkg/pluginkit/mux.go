package pluginkit

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// Mux is the plugin's method table. What is registered here is what the
// plugin advertises in --manifest and initialize, so the two cannot drift.
type Mux struct {
	routes map[string]*route
	order  []string
}

type route struct {
	method     string
	request    func(ctx context.Context, params []byte) (any, error)
	notify     func(ctx context.Context, params []byte)
	advertised bool
}

// NewMux returns an empty method table.
func NewMux() *Mux { return &Mux{routes: map[string]*route{}} }

// Validator is implemented by params types that check themselves after
// decoding; a failure is reported as invalid params (-32602) unless the
// returned error is an *Error with its own category.
type Validator interface {
	Validate() error
}

// ParamsDecoder is implemented, on its pointer, by a params type that reads
// its own JSON: one whose wire shape encoding/json cannot express (several
// accepted shapes, strict unknown-field rules, the references' exact
// messages). Handle calls DecodeParams with the params value, or with nil
// when the host sent none or null, instead of json.Unmarshal.
//
// What DecodeParams returns decides the -32602 the host sees: an error
// wrapping ErrMissingParams becomes "missing params for <method>" (the
// references' wording); an *Error is sent as it is; any other error becomes
// "invalid <method> params: <error>".
type ParamsDecoder interface {
	DecodeParams(raw []byte) error
}

// ErrMissingParams is returned by a ParamsDecoder whose method requires
// params that the host did not send.
var ErrMissingParams = errors.New("missing params")

// NoParams is the params type of a method that takes none: whatever the
// host sends is ignored, as the references ignore it.
type NoParams struct{}

// DecodeParams accepts anything.
func (*NoParams) DecodeParams([]byte) error { return nil }

// Handle registers a typed request handler. Params are decoded into P
// through the one decode path (decodeParams): a ParamsDecoder reads its
// own JSON; any other P is decoded by encoding/json (a missing or null
// params value decodes as the zero P), a decode error answering -32602
// naming the field; then a Validator checks itself. The handler's result R
// is sent as the response's result.
func Handle[P, R any](m *Mux, method string, fn func(ctx context.Context, params P) (R, error)) {
	r := m.route(method)
	if r.request != nil {
		panic("pluginkit: request handler registered twice for " + method)
	}
	r.advertised = true
	r.request = func(ctx context.Context, raw []byte) (any, error) {
		p, err := decodeParams[P](method, raw)
		if err != nil {
			return nil, err
		}
		return fn(ctx, p)
	}
}

// HandleNotification registers a handler for a notification from the host
// (for example trigger/ack, or subject/unwatch sent without an id). A
// method may have both a request and a notification handler. Notification
// handlers are never answered; a decode error is logged.
func HandleNotification[P any](m *Mux, method string, fn func(ctx context.Context, params P) error) {
	r := m.route(method)
	if r.notify != nil {
		panic("pluginkit: notification handler registered twice for " + method)
	}
	r.notify = func(ctx context.Context, raw []byte) {
		p, err := decodeParams[P](method, raw)
		if err == nil {
			err = fn(ctx, p)
		}
		if err != nil {
			loggerFrom(ctx).Warn("notification failed", "method", method, "error", err)
		}
	}
}

func (m *Mux) route(method string) *route {
	if isReserved(method) {
		panic("pluginkit: " + method + " is handled by pluginkit itself")
	}
	r, ok := m.routes[method]
	if !ok {
		r = &route{method: method}
		m.routes[method] = r
		m.order = append(m.order, method)
	}
	return r
}

// Methods lists the advertised request methods in registration order.
func (m *Mux) Methods() []string {
	out := make([]string, 0, len(m.order))
	for _, name := range m.order {
		if m.routes[name].advertised {
			out = append(out, name)
		}
	}
	return out
}

func (m *Mux) lookup(method string) *route {
	if m == nil {
		return nil
	}
	return m.routes[method]
}

// decodeParams is the one decode path of every handler's params (and of
// initialize's). raw is nil when the host sent no params or null.
func decodeParams[P any](method string, raw []byte) (P, error) {
	var p P
	if d, ok := any(&p).(ParamsDecoder); ok {
		if err := d.DecodeParams(raw); err != nil {
			return p, decoderError(method, err)
		}
	} else if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			return p, ParamsError(err)
		}
	}
	if v, ok := any(&p).(Validator); ok {
		if err := v.Validate(); err != nil {
			return p, asInvalidParams(err)
		}
	} else if v, ok := any(p).(Validator); ok {
		if err := v.Validate(); err != nil {
			return p, asInvalidParams(err)
		}
	}
	return p, nil
}

// decoderError is what a ParamsDecoder's failure becomes on the wire.
func decoderError(method string, err error) error {
	var e *Error
	switch {
	case errors.Is(err, ErrMissingParams):
		return InvalidParams("missing params for %s", method)
	case errors.As(err, &e):
		return err
	}
	return InvalidParams("invalid %s params: %s", method, err.Error())
}

func asInvalidParams(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return InvalidParams("invalid params: %s", err.Error())
}

// ParamsError turns an encoding/json decode error into the -32602 a
// handler's params get, naming the field: what Handle answers when it
// decodes the params, for a ParamsDecoder that falls back to
// encoding/json and must answer the same.
func ParamsError(err error) *Error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			return InvalidParams("invalid params: expected %s, got %s", describeType(typeErr.Type), typeErr.Value)
		}
		return InvalidParams("invalid params: field %q: expected %s, got %s", field, describeType(typeErr.Type), typeErr.Value).
			WithData("field", field)
	}
	return InvalidParams("invalid params: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// describeType renders a Go type as the JSON shape a client can act on.
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct, reflect.Interface:
		return "object"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	}
	return t.String()
}
