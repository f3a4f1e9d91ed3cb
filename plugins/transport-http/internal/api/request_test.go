package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// Bad input is refused before the daemon is called, with a message naming
// the problem, and the document refuses the same request wherever JSON
// Schema can say so (docRejects).
func TestInputValidation(t *testing.T) {
	d := newFakeDaemon(t)
	h := newHarness(t, withAuth(nil), d)
	sp := loadSpec(t, h.s)
	cases := []struct {
		method, target, body string
		contentType          string // default application/json when there is a body
		status               int
		code, msg            string
		docRejects           bool
	}{
		{"GET", "/api/v1/workflows?status=nope", "", "", 400, "invalid_input", "status must be one of", true},
		{"GET", "/api/v1/workflows?limit=-1", "", "", 400, "invalid_input", "limit must be an integer", true},
		{"GET", "/api/v1/workflows?limit=4294967296", "", "", 400, "invalid_input", "between 0 and 4294967295", true},
		{"GET", "/api/v1/queue?status=running", "", "", 400, "invalid_input", "status must be one of ready", true},
		{"GET", "/api/v1/daemon/logs?since=yesterday", "", "", 400, "invalid_input", "RFC 3339", true},
		{"GET", "/api/v1/daemon/logs?level=loud", "", "", 400, "invalid_input", "level must be one of", true},
		{"GET", "/api/v1/daemon/logs?limit=10001", "", "", 400, "invalid_input", "between 0 and 10000", true},
		{"GET", "/api/v1/daemon/logs?follow=maybe", "", "", 400, "invalid_input", "follow must be true or false", true},
		{"GET", "/api/v1/daemon/events?since=x", "", "", 400, "invalid_input", "since must be an RFC 3339", true},
		{"GET", "/api/v1/plugin/list?include_warnings=yes", "", "", 400, "invalid_input", "include_warnings", true},
		{"GET", "/api/v1/plugin/browse?installed=2", "", "", 400, "invalid_input", "installed", true},
		{"GET", "/api/v1/plugin/browse?available=x", "", "", 400, "invalid_input", "available", true},
		{"GET", "/api/v1/subjects", "", "", 400, "invalid_input", "kind is required", true},
		{"GET", "/api/v1/subjects?kind=task&status=open", "", "", 400, "invalid_input", "status must be one of", true},
		{"GET", "/api/v1/subjects?kind=task&updated_since=x", "", "", 400, "invalid_input", "updated_since", true},
		{"GET", "/api/v1/subjects?kind=task&limit=x", "", "", 400, "invalid_input", "limit", true},
		{"GET", "/api/v1/subjects/bare-id", "", "", 400, "invalid_input", "<kind>:<id>", true},
		{"GET", "/api/v1/subjects/:T-1", "", "", 400, "invalid_input", "<kind>:<id>", true},
		{"GET", "/api/v1/workflows/%20", "", "", 400, "invalid_input", "must not be empty", true},
		{"GET", "/api/v1/workflows/%20/events", "", "", 400, "invalid_input", "must not be empty", true},
		{"DELETE", "/api/v1/queue/drop/%20", "", "", 400, "invalid_input", "must not be empty", true},

		{"POST", "/api/v1/queue/enqueue", "", "", 400, "invalid_input", "a JSON request body is required", true},
		{"POST", "/api/v1/queue/enqueue", `{"priority":1}`, "", 400, "invalid_input", "field task_id is required", true},
		{"POST", "/api/v1/queue/enqueue", `{"task_id":"  "}`, "", 400, "invalid_input", "field task_id is required", true},
		{"POST", "/api/v1/queue/enqueue", `{"task_id":"t","priority":7}`, "", 400, "invalid_input", "between 0 and 4", true},
		{"POST", "/api/v1/queue/enqueue", `{"task_id":"t","priority":"high"}`, "", 400, "invalid_input",
			"field priority: expected a number, got string", true},
		{"POST", "/api/v1/queue/enqueue", `[1]`, "", 400, "invalid_input", "must be a JSON object", true},
		{"POST", "/api/v1/queue/enqueue", `{"task_id":`, "", 400, "invalid_input", "not valid JSON", true},
		{"POST", "/api/v1/queue/enqueue", `{"task_id":"t"}`, "text/plain", 415, "unsupported_media_type", "Content-Type: application/json", true},
		{"POST", "/api/v1/queue/reorder", `{"id":"q","subject_ids":["a"],"position":"front"}`, "", 400, "invalid_input", "exactly one of", true},
		{"POST", "/api/v1/queue/reorder", `{"position":"front"}`, "", 400, "invalid_input", "exactly one of", true},
		{"POST", "/api/v1/queue/reorder", `{"id":"q","position":"before"}`, "", 400, "invalid_input", "needs anchor_id", true},
		{"POST", "/api/v1/queue/reorder", `{"id":"q","position":"middle"}`, "", 400, "invalid_input", "position must be one of", true},
		{"POST", "/api/v1/queue/reorder", `{"id":"q"}`, "", 400, "invalid_input", "field position is required", true},
		{"POST", "/api/v1/queue/hold/q-1", `{"reason":true}`, "", 400, "invalid_input", "field reason: expected a string", true},
		{"POST", "/api/v1/workflows/run", `{"task_id":"t","actor":{"user_id":"x"}}`, "", 400, "invalid_input", "field actor", true},
		{"POST", "/api/v1/workflows/run", `{"task_id":"t","params":[1]}`, "", 400, "invalid_input", "field params must be an object", true},
		{"POST", "/api/v1/workflows/run", `{"definition":"x"}`, "", 400, "invalid_input", "field task_id is required", true},
		{"POST", "/api/v1/workflows/execute", `{"params":{}}`, "", 400, "invalid_input", "field definition is required", true},
		{"POST", "/api/v1/workflows/execute", `{"definition":null}`, "", 400, "invalid_input", "field definition is required", true},
		{"POST", "/api/v1/workflows/execute", `{"definition":"d","actor":{"user_id":"x"}}`, "", 400, "invalid_input", "field actor", true},
		{"POST", "/api/v1/workflows/wf-1/resume", `{"feedback":5}`, "", 400, "invalid_input", "field feedback: expected a string", true},
		{"POST", "/api/v1/workflows/wf-1/cancel", `{"reason":"r"}`, "application/xml", 415, "unsupported_media_type", "", true},
		{"POST", "/api/v1/plugin/install", `{}`, "", 400, "invalid_input", "field source is required", true},
		{"POST", "/api/v1/plugin/install", `{"source":"x","yes":"y"}`, "", 400, "invalid_input", "field yes: expected a boolean", true},
		{"POST", "/api/v1/plugin/call", `{"name":"x"}`, "", 400, "invalid_input", "field method is required", true},
		{"POST", "/api/v1/plugin/call", `{"method":"m"}`, "", 400, "invalid_input", "field name is required", true},
		{"POST", "/api/v1/subject/p/call", `{"params":{}}`, "", 400, "invalid_input", "field method is required", true},
		{"POST", "/api/v1/plugin/update", `{"dry_run":"yes"}`, "", 400, "invalid_input", "field dry_run: expected a boolean", true},
		{"POST", "/api/v1/subjects", `{"kind":"task"}`, "", 400, "invalid_input", "field title is required", true},
		{"POST", "/api/v1/subjects", `{"kind":"task","title":"t","status":"open"}`, "", 400, "invalid_input", "status must be one of", true},
		{"POST", "/api/v1/subjects", `{"kind":"task","title":"t","priority":9}`, "", 400, "invalid_input", "between 0 and 4", true},
		{"POST", "/api/v1/subjects", `{"kind":"task","title":"t","custom":"x"}`, "", 400, "invalid_input", "custom must be an object", true},
		{"POST", "/api/v1/subjects", `{"kind":"task","title":"t","labels":"x"}`, "", 400, "invalid_input", "field labels: expected an array", true},
		// Neither the body nor the query names a kind: the document cannot
		// say "one of the two".
		{"POST", "/api/v1/subjects/next", "", "", 400, "invalid_input", "field kind is required", false},
		{"PATCH", "/api/v1/subjects/task:T-1", `{"status":"open"}`, "", 400, "invalid_input", "status must be one of", true},
		{"PATCH", "/api/v1/subjects/task:T-1", `{"custom":[1]}`, "", 400, "invalid_input", "custom must be an object", true},
		{"PATCH", "/api/v1/subjects/task:T-1", `{"labels_add":"x"}`, "", 400, "invalid_input", "field labels_add: expected an array", true},
		{"PATCH", "/api/v1/subjects/nokind", `{"status":"done"}`, "", 400, "invalid_input", "<kind>:<id>", true},
		{"POST", "/api/v1/subjects/task:T-1/status", `{}`, "", 400, "invalid_input", "field status is required", true},
		{"POST", "/api/v1/subjects/task:T-1/status", `{"status":"open"}`, "", 400, "invalid_input", "status must be one of", true},
		{"POST", "/api/v1/subjects/bare/status", `{"status":"done"}`, "", 400, "invalid_input", "<kind>:<id>", true},
		{"POST", "/api/v1/agent/run", `{"provider":"p","model":"m"}`, "", 400, "invalid_input", "field prompt is required", true},
		{"POST", "/api/v1/agent/run", `{"provider":"p","model":"m","prompt":"x","env":{"A":1}}`, "", 400, "invalid_input", "field env", true},
		{"GET", "/api/v1/agent/%20/status", "", "", 400, "invalid_input", "must not be empty", true},
		{"POST", "/api/v1/agent/%20/cancel", "", "", 400, "invalid_input", "must not be empty", true},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.target+" "+c.body, func(t *testing.T) {
			before := len(d.received())
			rq := request{method: c.method, target: c.target, body: c.body}
			if c.contentType != "" {
				rq.header = map[string]string{"Content-Type": c.contentType}
			}
			x := h.on(t).do(rq)
			e := x.wantErr(t, c.status, c.code)
			if !strings.Contains(e.Message, c.msg) {
				t.Errorf("message %q, want it to say %q", e.Message, c.msg)
			}
			if n := len(d.received()) - before; n != 0 {
				t.Errorf("the daemon was called %d times for invalid input", n)
			}
			if err := sp.checkResponse(x); err != nil {
				t.Error(err)
			}
			if err := sp.checkRequest(x); (err != nil) != c.docRejects {
				t.Errorf("document rejects the request: %v, want %v", err, c.docRejects)
			}
		})
	}
}

// Input the handlers accept beyond the exemplars' forms: comma-separated
// lists, null as absent, +json media types, the query fallback of
// subject/next, and bodies ignored where the route has none.
func TestInputForms(t *testing.T) {
	d := newFakeDaemon(t)
	d.setAll(reply{closed: "done"})
	h := newHarness(t, withAuth(nil), d)
	cases := []struct {
		name, method, target, body, contentType string
		rpc, params                             string
	}{
		{"comma list", "GET", "/api/v1/subjects?kind=task,bug&assignee=a&assignee=b,c&labels_all=x&native_status=Todo" +
			"&dispatch_label=review&has_attachment_kind=document&cursor=c1&updated_since=2030-01-01T00:00:00.5Z", "", "",
			"subject/list", `{"filter":{"kind":["task","bug"],"assignee":["a","b","c"],"labels_all":["x"],"native_status":"Todo",` +
				`"dispatch_label":"review","has_attachment_kind":"document","cursor":"c1","updated_since":"2030-01-01T00:00:00.5Z"}}`},
		{"blank list items dropped", "GET", "/api/v1/workflows/events?kinds=a,,%20b", "", "", "workflow/events", `{"kinds":["a","b"]}`},
		{"null is absent", "POST", "/api/v1/workflows/run", `{"task_id":"t","definition":null,"params":null,"actor":null}`, "",
			"workflow/run", `{"task_id":"t"}`},
		{"+json media type", "POST", "/api/v1/queue/hold/q-1", `{"reason":"r"}`, "application/merge-patch+json; charset=utf-8",
			"queue/hold", `{"id":"q-1","reason":"r"}`},
		{"optional body absent", "POST", "/api/v1/workflows/wf-1/cancel", "", "", "workflow/cancel", `{"id":"wf-1"}`},
		{"optional body blank", "POST", "/api/v1/plugin/update", "  \n", "", "plugin/update", `{}`},
		{"unknown fields ignored", "POST", "/api/v1/workflows/wf-1/resume", `{"feedback":"f","other":1}`, "",
			"workflow/resume", `{"id":"wf-1","feedback":"f"}`},
		{"release ignores its body", "POST", "/api/v1/queue/release/q-2", `not json`, "text/plain", "queue/release", `{"id":"q-2"}`},
		{"kind from the body wins", "POST", "/api/v1/subjects/next?kind=bug", `{"kind":"task"}`, "", "subject/next", `{"kind":"task"}`},
		{"include_warnings defaults to false", "GET", "/api/v1/plugin/list", "", "", "plugin/list", `{"include_warnings":false}`},
		{"search query defaults to empty", "GET", "/api/v1/plugin/search", "", "", "plugin/search", `{"query":""}`},
		{"percent-encoded id", "GET", "/api/v1/workflows/wf%2F1", "", "", "workflow/get", `{"id":"wf/1"}`},
		{"logs batch without filters", "GET", "/api/v1/daemon/logs", "", "", "daemon/logs", `{"follow":false}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(d.received())
			rq := request{method: c.method, target: c.target, body: c.body}
			if c.contentType != "" {
				rq.header = map[string]string{"Content-Type": c.contentType}
			}
			x := h.on(t).do(rq)
			if x.status != http.StatusOK {
				t.Fatalf("%d %s", x.status, x.body)
			}
			calls := d.received()[before:]
			if len(calls) != 1 || calls[0].Method != c.rpc || !jsonEqual(t, string(calls[0].Params), c.params) {
				t.Errorf("calls %+v, want %s %s", calls, c.rpc, c.params)
			}
		})
	}
}

// A body that lies about its length is cut at the limit while it is read.
func TestBodyLimitWhileReading(t *testing.T) {
	h := newHarness(t, Options{MaxBodyBytes: 32}, newFakeDaemon(t))
	x := h.do(request{method: "POST", target: "/api/v1/queue/enqueue", contentLength: -1,
		body: `{"task_id":"` + strings.Repeat("x", 64) + `"}`})
	if e := x.wantErr(t, 413, "payload_too_large"); !strings.Contains(e.Message, "32 bytes") {
		t.Errorf("message %q", e.Message)
	}
}

func TestPathParam(t *testing.T) {
	cases := []struct{ raw, want, err string }{
		{"wf-1", "wf-1", ""},
		{"a%2Fb", "a/b", ""},
		{"%zz", "", "not valid percent-encoding"},
		{"%20%09", "", "must not be empty"},
		{"", "", "must not be empty"},
	}
	for _, c := range cases {
		rctx := chi.NewRouteContext()
		rctx.URLParams.Add("id", c.raw)
		r := httptest.NewRequest("GET", "/", nil)
		r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rctx))
		got, err := pathParam(r, "id")
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("pathParam(%q) = %q, %v; want %q, %q", c.raw, got, err, c.want, c.err)
		}
	}
}

func TestJSONErrors(t *testing.T) {
	typeErr := func(field string, typ reflect.Type, value string) error {
		return &json.UnmarshalTypeError{Field: field, Type: typ, Value: value}
	}
	cases := []struct {
		err  error
		want string
	}{
		{typeErr("a", reflect.TypeOf(""), "number"), "field a: expected a string, got number"},
		{typeErr("b", reflect.TypeOf(true), "string"), "field b: expected a boolean, got string"},
		{typeErr("c", reflect.TypeOf([]int{}), "object"), "field c: expected an array, got object"},
		{typeErr("d", reflect.TypeOf(map[string]int{}), "array"), "field d: expected an object, got array"},
		{typeErr("e", reflect.TypeOf(struct{}{}), "string"), "field e: expected an object, got string"},
		{typeErr("f", reflect.TypeOf((*int)(nil)), "string"), "field f: expected a value, got string"},
		{typeErr("g", reflect.TypeOf(1.5), "string"), "field g: expected a number, got string"},
		{typeErr("", reflect.TypeOf(""), "number"), "the request body does not decode: "},
		{&json.SyntaxError{Offset: 7}, "not valid JSON (at byte 7)"},
		{errors.New("json: unknown field \"x\""), "the request body does not decode: unknown field \"x\""},
	}
	for _, c := range cases {
		if got := jsonError(c.err); got.Status != 400 || !strings.Contains(got.Message, c.want) {
			t.Errorf("jsonError(%v) = %d %q, want %q", c.err, got.Status, got.Message, c.want)
		}
	}
}

// params.set leaves out what was not given, so the daemon's defaults
// apply; asAPIError keeps an apiError and makes anything else a 400.
func TestParamsAndErrors(t *testing.T) {
	s, n, b, i := "v", uint64(3), true, 2
	p := params{}.set("s", &s).set("n", &n).set("b", &b).set("i", &i).set("raw", json.RawMessage(`{"a":1}`)).
		set("list", []string{"x"}).set("any", map[string]int{"k": 1}).
		set("nil-s", (*string)(nil)).set("nil-n", (*uint64)(nil)).set("nil-b", (*bool)(nil)).set("nil-i", (*int)(nil)).
		set("null", json.RawMessage("null")).set("empty", []string{}).set("nil", nil)
	if got := string(mustJSON(t, p)); !jsonEqual(t, got, `{"s":"v","n":3,"b":true,"i":2,"raw":{"a":1},"list":["x"],"any":{"k":1}}`) {
		t.Errorf("params %s", got)
	}
	e := badInput("x %d", 1)
	if asAPIError(e) != e || e.Error() != "x 1" {
		t.Error("an apiError must pass through")
	}
	if got := asAPIError(errors.New("plain")); got.Status != 400 || got.Code != "invalid_input" || got.Message != "plain" {
		t.Errorf("%+v", got)
	}
}
