package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// GET /api/v1/openapi.json is the bare document: what OpenAPI tools read.
func TestOpenAPIServedBare(t *testing.T) {
	h := newHarness(t, withAuth(nil), nil)
	x := h.do(request{method: "GET", target: "/api/v1/openapi.json"})
	if x.status != http.StatusOK || x.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", x.status, x.header.Get("Content-Type"))
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(x.body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ok", "data", "error"} {
		if _, ok := doc[k]; ok {
			t.Errorf("the document has the envelope's %q key", k)
		}
	}
	if string(doc["openapi"]) != `"3.1.0"` || doc["paths"] == nil || doc["components"] == nil {
		t.Errorf("not an OpenAPI 3.1 document: openapi %s", doc["openapi"])
	}
	built, _ := h.s.spec()
	if !bytes.Equal(x.body, built) {
		t.Error("the served document is not the built one")
	}
	// Its errors keep the envelope.
	h.do(request{method: "GET", target: "/api/v1/openapi.json", noAuth: true}).wantErr(t, 401, "unauthenticated")
}

// The document is valid OpenAPI 3.1: libopenapi builds the model (every
// $ref resolves) and the validator checks it against the 3.1 meta-schema.
func TestOpenAPIDocumentValidates(t *testing.T) {
	sp := loadSpec(t, newTestServer(t, Options{}))
	if v := sp.model.Version; v != "3.1.0" {
		t.Errorf("model version %q", v)
	}
	if ok, errs := sp.v.ValidateDocument(); !ok {
		t.Fatalf("openapi.json is not valid OpenAPI 3.1:%s", problems(errs))
	}
	if n := sp.model.Paths.PathItems.Len(); n < 40 {
		t.Errorf("%d paths", n)
	}
	// The daemon's published types are there, hoisted out of $defs.
	for _, name := range []string{"Subject", "SubjectList", "SubjectPatch", "SubjectChangedEvent", "SubjectStatus",
		"SubjectId", "SubjectAttachment", "ChangeKind", "LogEntry", "LogLevel", "LogSource", "TransportInfo"} {
		if sp.model.Components.Schemas.GetOrZero(name) == nil {
			t.Errorf("components/schemas lacks the wire type %s", name)
		}
	}
	if bytes.Contains(sp.raw, []byte("#/$defs/")) || bytes.Contains(sp.raw, []byte(`"$defs"`)) {
		t.Error("a $defs reference survived the hoisting")
	}

	// The same check fails a broken document: parameters "in": "body" is
	// OpenAPI 2, and a response needs a description.
	for name, breakIt := range map[string]func(doc obj){
		"swagger 2 parameter": func(doc obj) {
			op := doc["paths"].(obj)["/api/v1/workflows/{id}"].(obj)["get"].(obj)
			op["parameters"].([]any)[0].(obj)["in"] = "body"
		},
		"response without description": func(doc obj) {
			op := doc["paths"].(obj)["/healthz"].(obj)["get"].(obj)
			delete(op["responses"].(obj)["200"].(obj), "description")
		},
	} {
		var doc obj
		if err := json.Unmarshal(sp.raw, &doc); err != nil {
			t.Fatal(err)
		}
		breakIt(doc)
		raw, _ := json.Marshal(doc)
		broken, err := libopenapi.NewDocument(raw)
		if err != nil {
			t.Fatal(err)
		}
		v, errs := validator.NewValidator(broken)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if ok, _ := v.ValidateDocument(); ok {
			t.Errorf("%s: the broken document validates", name)
		}
	}
}

// The validator really checks shapes: documented and undocumented
// responses of one operation are told apart. Without this, a validator
// that accepted everything would make every other response test pass.
func TestOpenAPIRejectsWrongResponses(t *testing.T) {
	sp := loadSpec(t, newTestServer(t, Options{}))
	ok := func(data string) string { return `{"ok":true,"data":` + data + `}` }
	errBody := func(category, code string) string {
		return `{"ok":false,"error":{"category":"` + category + `","code":"` + code + `","message":"m"}}`
	}
	cases := []struct {
		name, method, target string
		status               int
		body                 string
		valid                bool
	}{
		{"status data", "GET", "/api/v1/daemon/status", 200, ok(`{"running":true,"pid":1}`), true},
		{"status without running", "GET", "/api/v1/daemon/status", 200, ok(`{"pid":1}`), false},
		{"data not wrapped", "GET", "/api/v1/daemon/status", 200, `{"running":true}`, false},
		{"envelope with an extra key", "GET", "/api/v1/daemon/status", 200, `{"ok":true,"data":{"running":true},"x":1}`, false},
		{"undocumented status", "GET", "/api/v1/daemon/status", 418, errBody("internal", "internal"), false},
		{"404 not_found", "GET", "/api/v1/workflows/wf-1", 404, errBody("not_found", "not_found"), true},
		{"404 with a 502 code", "GET", "/api/v1/workflows/wf-1", 404, errBody("unavailable", "wire_error"), false},
		{"error without message", "GET", "/api/v1/workflows/wf-1", 404, `{"ok":false,"error":{"category":"not_found","code":"not_found"}}`, false},
		{"500 with an unknown category", "GET", "/api/v1/workflows/wf-1", 500, errBody("novel", "novel"), true},
		{"queue entry status outside the enum", "POST", "/api/v1/queue/enqueue", 200,
			ok(`{"id":"q","subject_id":"s","status":"lost","priority":1,"enqueued_at":"2030-01-01T00:00:00Z"}`), false},
		{"subject from the wire schema", "GET", "/api/v1/subjects/task:T-1", 200, ok(fixtureSubject), true},
		{"subject missing updated_at", "GET", "/api/v1/subjects/task:T-1", 200,
			ok(`{"id":"task:T-1","kind":"task","title":"t","status":"ready","created_at":"2030-01-01T00:00:00Z"}`), false},
		{"subject status outside SubjectStatus", "GET", "/api/v1/subjects/task:T-1", 200,
			ok(strings.Replace(fixtureSubject, `"ready"`, `"open"`, 1)), false},
		{"healthz closed shape", "GET", "/healthz", 200, ok(`{"status":"ok","started_at":"2030-01-01T00:00:00Z","uptime_ms":1,"x":1}`), false},
		{"healthz cannot 401", "GET", "/healthz", 401, errBody("unauthenticated", "unauthenticated"), false},
		{"openapi bare", "GET", "/api/v1/openapi.json", 200, `{"openapi":"3.1.0","info":{},"paths":{}}`, true},
		{"openapi enveloped", "GET", "/api/v1/openapi.json", 200, ok(`{"openapi":"3.1.0","info":{},"paths":{}}`), false},
		{"stop cannot 415", "POST", "/api/v1/daemon/stop", 415, errBody("invalid_request", "unsupported_media_type"), false},
		{"enqueue can 415", "POST", "/api/v1/queue/enqueue", 415, errBody("invalid_request", "unsupported_media_type"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := http.Header{"Content-Type": {"application/json"}}
			x := exchange{method: c.method, target: c.target, reqHeader: http.Header{}, status: c.status, header: hdr, body: []byte(c.body)}
			if err := sp.checkResponse(x); (err == nil) != c.valid {
				t.Errorf("valid %v, got %v", c.valid, err)
			}
		})
	}
	// A 401 must carry WWW-Authenticate, as writeErr sends it.
	x := exchange{method: "GET", target: "/api/v1/daemon/status", reqHeader: http.Header{}, status: 401,
		header: http.Header{"Content-Type": {"application/json"}}, body: []byte(errBody("unauthenticated", "unauthenticated"))}
	if sp.checkResponse(x) == nil {
		t.Error("a 401 without WWW-Authenticate passed")
	}
	x.header.Set("WWW-Authenticate", `Bearer realm="animus"`)
	if err := sp.checkResponse(x); err != nil {
		t.Error(err)
	}
}

// The document is built once and a broken build is a 500, not a panic.
func TestOpenAPIBuildFailureIs500(t *testing.T) {
	s := newTestServer(t, Options{})
	s.spec = func() ([]byte, error) { return nil, errors.New("broken table") }
	w := httptest.NewRecorder()
	s.openapi(w, httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
	if w.Code != 500 || errCode(t, w) != "internal" {
		t.Errorf("%d %s", w.Code, w.Body)
	}
}

func TestWireSchemaHoisting(t *testing.T) {
	got, err := wireSchemas()
	if err != nil {
		t.Fatal(err)
	}
	subject := got["Subject"]
	props := subject["properties"].(obj)
	if r := props["status"].(obj)["$ref"]; r != "#/components/schemas/SubjectStatus" {
		t.Errorf("Subject.status $ref %v", r)
	}
	if _, ok := subject["$schema"]; ok {
		t.Error("$schema kept")
	}
	// SubjectStatus comes from its own file (with its description), not
	// from a $defs copy.
	if d, _ := got["SubjectStatus"]["description"].(string); d == "" {
		t.Error("SubjectStatus lost its description")
	}

	cases := []struct {
		name    string
		in      any
		wantErr bool
	}{
		{"local ref", obj{"$ref": "#/$defs/X"}, false},
		{"remote ref", obj{"$ref": "https://example.com/x.json"}, true},
		{"nested defs", obj{"properties": obj{"a": obj{"$defs": obj{}}}}, true},
		{"ref in an array", obj{"anyOf": []any{obj{"$ref": "#/definitions/X"}}}, true},
	}
	for _, c := range cases {
		if err := rewriteRefs(c.in, true); (err != nil) != c.wantErr {
			t.Errorf("%s: err %v", c.name, err)
		}
	}
	if !sameShape(obj{"type": "string", "description": "a"}, obj{"type": "string", "title": "T"}) {
		t.Error("annotations must not count")
	}
	if sameShape(obj{"type": "string"}, obj{"type": "integer"}) {
		t.Error("different types must differ")
	}
}

func TestCheckRefs(t *testing.T) {
	doc := obj{"components": obj{"schemas": obj{"A": obj{}}, "responses": obj{"E400": obj{}}},
		"paths": obj{"/x": obj{"get": obj{"responses": obj{"400": obj{"$ref": "#/components/responses/E400"}}}}}}
	if err := checkRefs(doc); err != nil {
		t.Fatal(err)
	}
	doc["paths"].(obj)["/x"].(obj)["get"].(obj)["x"] = []any{obj{"$ref": "#/components/schemas/B"}}
	if err := checkRefs(doc); err == nil || !strings.Contains(err.Error(), "schemas/B") {
		t.Errorf("unresolved ref: %v", err)
	}
}
