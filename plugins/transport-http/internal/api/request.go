package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
)

// Everything here runs before the daemon is dialled: bad input is a 400
// whether or not the daemon is up (the reference dialled first and
// answered 503 to invalid input while the daemon was down).

// pathParam returns a non-empty, percent-decoded path segment.
func pathParam(r *http.Request, name string) (string, error) {
	raw := chi.URLParam(r, name)
	v, err := url.PathUnescape(raw)
	if err != nil {
		return "", badInput("path parameter %s is not valid percent-encoding", name)
	}
	if strings.TrimSpace(v) == "" {
		return "", badInput("path parameter %s must not be empty", name)
	}
	return v, nil
}

// query reads r's query string once per call site; absent and empty values
// are both "not given".
type query struct{ v url.Values }

func queryOf(r *http.Request) query { return query{r.URL.Query()} }

func (q query) str(name string) *string {
	v := q.v.Get(name)
	if v == "" {
		return nil
	}
	return &v
}

// list reads a repeated or comma-separated parameter.
func (q query) list(name string) []string {
	var out []string
	for _, v := range q.v[name] {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

func (q query) uint(name string, max uint64) (*uint64, error) {
	v := q.v.Get(name)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > max {
		return nil, badInput("query parameter %s must be an integer between 0 and %d", name, max)
	}
	return &n, nil
}

func (q query) boolean(name string) (*bool, error) {
	v := q.v.Get(name)
	if v == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return nil, badInput("query parameter %s must be true or false", name)
	}
	return &b, nil
}

func (q query) enum(name string, allowed []string) (*string, error) {
	v := q.str(name)
	if v == nil {
		return nil, nil
	}
	if err := oneOf(name, *v, allowed); err != nil {
		return nil, err
	}
	return v, nil
}

func (q query) timestamp(name string) (*string, error) {
	v := q.str(name)
	if v == nil {
		return nil, nil
	}
	if _, err := time.Parse(time.RFC3339Nano, *v); err != nil {
		return nil, badInput("query parameter %s must be an RFC 3339 timestamp", name)
	}
	return v, nil
}

func oneOf(field, v string, allowed []string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return badInput("%s must be one of %s, got %q", field, strings.Join(allowed, ", "), v)
}

// decodeBody decodes a JSON object body into v. An empty body is fine when
// the body is optional (v keeps its zero value) and a 400 when required.
// A body must say Content-Type: application/json: that also keeps browsers
// from sending it cross-site without a CORS preflight.
func decodeBody(r *http.Request, v any, required bool) error {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return tooLarge(tooBig.Limit)
		}
		return badInput("could not read the request body")
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		if required {
			return badInput("a JSON request body is required")
		}
		return nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil ||
		(mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return newError(http.StatusUnsupportedMediaType, "invalid_request", "unsupported_media_type",
			"request bodies must be sent with Content-Type: application/json")
	}
	if t := bytes.TrimSpace(raw); t[0] != '{' {
		return badInput("the request body must be a JSON object")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonError(err)
	}
	return nil
}

// jsonError names the offending field, as a client can act on it.
func jsonError(err error) *apiError {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return badInput("field %s: expected %s, got %s", typeErr.Field, jsonType(typeErr.Type.Kind().String()), typeErr.Value)
	}
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return badInput("the request body is not valid JSON (at byte %d)", syntax.Offset)
	}
	return badInput("the request body does not decode: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "interface":
		return "an object"
	case "ptr":
		return "a value"
	}
	return "a number"
}

// optional JSON values: a field present with null is "absent", as the
// daemon's decoders treat it.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

func requireString(field string, v *string) error {
	if v == nil || strings.TrimSpace(*v) == "" {
		return badInput("field %s is required", field)
	}
	return nil
}

func rangeCheck(field string, v *int, lo, hi int) error {
	if v != nil && (*v < lo || *v > hi) {
		return badInput("field %s must be between %d and %d", field, lo, hi)
	}
	return nil
}

func requireObject(field string, raw json.RawMessage) error {
	if present(raw) && bytes.TrimSpace(raw)[0] != '{' {
		return badInput("field %s must be an object", field)
	}
	return nil
}

// params collects control params, leaving out what was not given (the
// daemon omits optional fields rather than sending null).
type params map[string]any

func (p params) set(key string, v any) params {
	switch x := v.(type) {
	case *string:
		if x != nil {
			p[key] = *x
		}
	case *uint64:
		if x != nil {
			p[key] = *x
		}
	case *bool:
		if x != nil {
			p[key] = *x
		}
	case *int:
		if x != nil {
			p[key] = *x
		}
	case json.RawMessage:
		if present(x) {
			p[key] = x
		}
	case []string:
		if len(x) > 0 {
			p[key] = x
		}
	default:
		if v != nil {
			p[key] = v
		}
	}
	return p
}

func subjectID(id string) error {
	kind, native, ok := strings.Cut(id, ":")
	if !ok || kind == "" || native == "" {
		return badInput("subject id %q must have the form <kind>:<id>", id)
	}
	return nil
}

// idAndOptionalString builds params {id, <field>?} from the {id} path
// parameter and an optional string field of the JSON body; anything else
// in the body is ignored, as the reference transport did (queue/hold's
// reason, workflow/resume's feedback, workflow/cancel's reason). The body
// decodes into a one-field struct tagged with the field's name, so a bad
// value is reported exactly as for any other body field.
func idAndOptionalString(field string) func(*http.Request) (any, error) {
	body := reflect.StructOf([]reflect.StructField{{
		Name: "Value", Type: reflect.TypeOf((*string)(nil)), Tag: reflect.StructTag(`json:"` + field + `"`),
	}})
	return func(r *http.Request) (any, error) {
		id, err := pathParam(r, "id")
		if err != nil {
			return nil, err
		}
		b := reflect.New(body)
		if err := decodeBody(r, b.Interface(), false); err != nil {
			return nil, err
		}
		return params{"id": id}.set(field, b.Elem().Field(0).Interface().(*string)), nil
	}
}
