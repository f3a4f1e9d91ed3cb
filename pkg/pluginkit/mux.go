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

// Handle registers a typed request handler. Params are decoded into P (a
// missing or null params value decodes as the zero P); a decode error
// answers -32602 naming the field. The handler's result R is sent as the
// response's result.
func Handle[P, R any](m *Mux, method string, fn func(ctx context.Context, params P) (R, error)) {
	r := m.route(method)
	if r.request != nil {
		panic("pluginkit: request handler registered twice for " + method)
	}
	r.advertised = true
	r.request = func(ctx context.Context, raw []byte) (any, error) {
		p, err := decodeParams[P](raw)
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
		p, err := decodeParams[P](raw)
		if err == nil {
			err = fn(ctx, p)
		}
		if err != nil {
			loggerFrom(ctx).Warn("notification failed", "method", method, "error", err)
		}
	}
}

func (m *Mux) route(method string) *route {
	if method == "" || strings.HasPrefix(method, "$/") || reservedMethods[method] {
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

// reservedMethods are served by pluginkit for every plugin.
var reservedMethods = map[string]bool{
	"initialize": true, "initialized": true, "shutdown": true, "exit": true, "health/check": true,
}

func decodeParams[P any](raw []byte) (P, error) {
	var p P
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			return p, paramsError(err)
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

func asInvalidParams(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return InvalidParams("invalid params: %s", err.Error())
}

// paramsError turns a json decode error into -32602 naming the field.
func paramsError(err error) *Error {
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
