package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// spec is openapi.json loaded into libopenapi and its validator, the way
// an OpenAPI tool would read it.
type spec struct {
	raw   []byte
	tree  map[string]any // the document as plain JSON
	doc   libopenapi.Document
	model *v3.Document
	v     validator.Validator
	sv    schema_validation.SchemaValidator
	mu    sync.Mutex // the validator's caches are not documented as safe for concurrent use
}

func loadSpec(t *testing.T, s *Server) *spec {
	t.Helper()
	raw, err := s.spec()
	if err != nil {
		t.Fatalf("openapi.json does not build: %v", err)
	}
	sp := &spec{raw: raw}
	if err := json.Unmarshal(raw, &sp.tree); err != nil {
		t.Fatal(err)
	}
	if sp.doc, err = libopenapi.NewDocument(raw); err != nil {
		t.Fatalf("libopenapi cannot read openapi.json: %v", err)
	}
	m, err := sp.doc.BuildV3Model()
	if err != nil {
		t.Fatalf("libopenapi cannot build the 3.1 model: %v", err)
	}
	sp.model = &m.Model
	var errs []error
	// Format assertions on: date-time is checked, as the handlers check
	// RFC 3339 timestamps.
	if sp.v, errs = validator.NewValidator(sp.doc, config.WithFormatAssertions()); len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	sp.sv = schema_validation.NewSchemaValidator(config.WithFormatAssertions())
	return sp
}

// problems renders validation errors for a failure message.
func problems(errs []*liberrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s: %s", e.Message, e.Reason)
		for _, f := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n    %s at %s (%s)", f.Reason, f.FieldPath, f.KeywordLocation)
		}
	}
	return b.String()
}

// checkResponse validates one exchange's response (status, content type,
// headers, body) against the operation the document has for its request.
func (sp *spec) checkResponse(x exchange) error {
	req := httptest.NewRequest(x.method, x.target, bytes.NewReader(x.reqBody))
	req.Header = x.reqHeader.Clone()
	resp := &http.Response{StatusCode: x.status, Header: x.header.Clone(), Body: io.NopCloser(bytes.NewReader(x.body)), Request: req}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if ok, errs := sp.v.ValidateHttpResponse(req, resp); !ok {
		return fmt.Errorf("%s %s → %d %s%s", x.method, x.target, x.status, x.body, problems(errs))
	}
	return nil
}

// checkRequest validates a request (parameters, body, security) against
// the document.
func (sp *spec) checkRequest(x exchange) error {
	req := httptest.NewRequest(x.method, x.target, bytes.NewReader(x.reqBody))
	req.Header = x.reqHeader.Clone()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if ok, errs := sp.v.ValidateHttpRequestSync(req); !ok {
		return fmt.Errorf("%s %s %s%s", x.method, x.target, x.reqBody, problems(errs))
	}
	return nil
}

// checkSchema validates a JSON value against a components/schemas entry.
func (sp *spec) checkSchema(name string, data []byte) error {
	proxy := sp.model.Components.Schemas.GetOrZero(name)
	if proxy == nil {
		return fmt.Errorf("no schema %s", name)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if ok, errs := sp.sv.ValidateSchemaBytes(proxy.Schema(), data); !ok {
		return fmt.Errorf("%s does not accept %s%s", name, data, problems(errs))
	}
	return nil
}

// operation is the document's operation for a pattern and method, as JSON.
func (sp *spec) operation(pattern, method string) map[string]any {
	paths, _ := sp.tree["paths"].(map[string]any)
	item, _ := paths[pattern].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	return op
}

// statuses lists the response statuses the document gives an operation.
func (sp *spec) statuses(pattern, method string) map[int]bool {
	out := map[int]bool{}
	responses, _ := sp.operation(pattern, method)["responses"].(map[string]any)
	for code := range responses {
		var n int
		if _, err := fmt.Sscan(code, &n); err == nil {
			out[n] = true
		}
	}
	return out
}

// sseSchema is the schema name the document gives an SSE event of an
// operation (x-sse-events), or "".
func (sp *spec) sseSchema(pattern, method, event string) string {
	op := sp.operation(pattern, method)
	resp, _ := op["responses"].(map[string]any)
	ok, _ := resp["200"].(map[string]any)
	content, _ := ok["content"].(map[string]any)
	stream, _ := content["text/event-stream"].(map[string]any)
	events, _ := stream["x-sse-events"].(map[string]any)
	ev, _ := events[event].(map[string]any)
	r, _ := ev["$ref"].(string)
	return strings.TrimPrefix(r, "#/components/schemas/")
}

// checkStream validates every event of an SSE body against the schema the
// document names for it.
func (sp *spec) checkStream(pattern, method string, body []byte) error {
	events, _ := parseSSE(body)
	if len(events) == 0 {
		return fmt.Errorf("no events in %q", body)
	}
	for _, ev := range events {
		name := sp.sseSchema(pattern, method, ev.event)
		if name == "" {
			return fmt.Errorf("event %q is not described", ev.event)
		}
		if err := sp.checkSchema(name, []byte(ev.data)); err != nil {
			return fmt.Errorf("event %s: %w", ev.event, err)
		}
	}
	return nil
}
