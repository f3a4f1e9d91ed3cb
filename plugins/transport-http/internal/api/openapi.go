package api

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// openapi serves the OpenAPI 3.1 document itself, without the envelope:
// tools (Swagger UI, generators, linters) read the document at the URL.
// Its errors (401, 403, 413) still use the envelope, as everywhere.
func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) {
	doc, err := s.spec()
	if err != nil {
		// The document is built from tables compiled into the binary, so
		// this is a bug; the tests build it on every run.
		s.opts.Logger.Error("openapi.json cannot be built", "error", err)
		writeErr(w, newError(http.StatusInternalServerError, "internal", "internal", "internal error"))
		return
	}
	jsonHeaders(w)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc)
}

// daemonCallStatuses are what fromControl can make of a control call: the
// daemon's categories, a lost connection, a timeout, an unreachable socket
// or a closing transport, plus the 400 a handler's own validation gives.
var daemonCallStatuses = []int{
	http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusConflict,
	http.StatusInternalServerError, http.StatusNotImplemented, http.StatusBadGateway,
	http.StatusServiceUnavailable, http.StatusGatewayTimeout,
}

// errorStatuses is every error status a request to rt can get: the
// middleware's (Host and Origin 403, body limit 413, panic 500, and 401
// unless public), 415 where a body is decoded, and the handler's own.
func (rt route) errorStatuses() []int {
	out := []int{http.StatusForbidden, http.StatusRequestEntityTooLarge, http.StatusInternalServerError}
	if !rt.public {
		out = append(out, http.StatusUnauthorized)
	}
	if rt.body != noBody {
		out = append(out, http.StatusUnsupportedMediaType)
	}
	own := rt.statuses
	if own == nil && rt.rpc != "" {
		own = daemonCallStatuses
	}
	out = append(out, own...)
	slices.Sort(out)
	return slices.Compact(out)
}

// buildOpenAPI renders the document once; the tables it reads are fixed
// when the Server is built.
func (s *Server) buildOpenAPI() ([]byte, error) {
	wire, err := wireSchemas()
	if err != nil {
		return nil, fmt.Errorf("embedded wire schemas: %w", err)
	}
	schemas := obj{}
	for _, set := range []map[string]obj{wire, transportSchemas(), daemonSchemas(), bodySchemas()} {
		for name, sc := range set {
			if _, dup := schemas[name]; dup {
				return nil, fmt.Errorf("schema %s is defined twice", name)
			}
			schemas[name] = sc
		}
	}
	paths := obj{}
	for _, rt := range s.routes {
		item, _ := paths[rt.path].(obj)
		if item == nil {
			item = obj{}
			paths[rt.path] = item
		}
		item[strings.ToLower(rt.method)] = rt.operation()
	}
	doc := obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":       "Animus daemon HTTP API (animus-transport-http)",
			"version":     "1",
			"description": infoDescription,
		},
		"tags":     tags(),
		"security": []any{obj{"bearer": []any{}}},
		"paths":    paths,
		"components": obj{
			"schemas":         schemas,
			"responses":       errorResponses(),
			"securitySchemes": obj{"bearer": obj{"type": "http", "scheme": "bearer"}},
		},
	}
	if err := checkRefs(doc); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := rustjson.Encode(&b, doc); err != nil { // descriptions say <kind>:<id>
		return nil, err
	}
	return b.Bytes(), nil
}

const infoDescription = "REST and Server-Sent Events gateway to the Animus daemon's control socket.\n\n" +
	"Every JSON response is an envelope: `{\"ok\":true,\"data\":…}` or " +
	"`{\"ok\":false,\"error\":{\"category\",\"code\",\"message\",\"rpc_code\"?}}`; only this document is served bare. " +
	"A daemon error keeps its category and gets the status it means (not_found 404, invalid_request 400, " +
	"permission_denied 403, conflict 409, not_supported 501, unavailable 503, internal 500).\n\n" +
	"Outside the operations below: an unknown path is 404 `route_not_found`; a known path with a method it does not " +
	"serve is 405 `method_not_allowed` with an `Allow` header; a CORS preflight (OPTIONS with Origin and " +
	"Access-Control-Request-Method) from an allowed origin is 204 on any path. All three have no operation here.\n\n" +
	"Streams answer `text/event-stream`: each item is `id:`, `event: <name>`, `data: <item JSON>`; `: keep-alive` " +
	"comments come every keepalive_ms; `event: end` (data StreamEnd) finishes a stream, `event: error` (data " +
	"StreamError) means the daemon connection was lost. `x-sse-events` on each stream lists its events' data schemas."

// tags group the operations by the first path segment after /api/v1.
func tags() []any {
	var out []any
	for _, t := range [][2]string{
		{"meta", "The transport itself"}, {"daemon", "daemon/*"}, {"workflows", "workflow/*"}, {"queue", "queue/*"},
		{"plugins", "plugin/* (and a subject plugin's methods)"}, {"subjects", "subject/*"}, {"agents", "agent/*"},
	} {
		out = append(out, obj{"name": t[0], "description": t[1]})
	}
	return out
}

func (rt route) tag() string {
	seg, _, _ := strings.Cut(strings.TrimPrefix(rt.path, "/api/v1/"), "/")
	switch seg {
	case "daemon", "workflows", "queue", "subjects":
		return seg
	case "plugin", "subject":
		return "plugins"
	case "agent":
		return "agents"
	}
	return "meta"
}

func (rt route) operation() obj {
	op := obj{
		"summary":     rt.summary,
		"operationId": operationID(rt),
		"tags":        []string{rt.tag()},
		"responses":   rt.responses(),
	}
	if rt.rpc != "" {
		op["x-control-method"] = rt.rpc
	}
	if rt.public {
		op["security"] = []any{}
	}
	if ps := rt.parameters(); len(ps) > 0 {
		op["parameters"] = ps
	}
	if rt.body != noBody {
		op["requestBody"] = obj{
			"required": rt.body == requiredBody,
			"content":  obj{"application/json": obj{"schema": ref(rt.in)}},
		}
	}
	return op
}

func (rt route) responses() obj {
	out := obj{}
	content := obj{}
	switch {
	case rt.out != "" && rt.bare:
		content["application/json"] = obj{"schema": ref(rt.out)}
	case rt.out != "":
		content["application/json"] = obj{"schema": closed(object("", []string{"ok", "data"}, obj{
			"ok":   constant(true, ""),
			"data": ref(rt.out),
		}))}
	}
	if rt.streams() {
		events := obj{rt.sse.event: ref(rt.sse.item), "end": ref("StreamEnd"), "error": ref("StreamError")}
		content["text/event-stream"] = obj{
			"schema":       str("Server-Sent Events; each event's data is one line of JSON"),
			"x-sse-events": events,
		}
	}
	if len(content) > 0 {
		desc := "Success"
		if rt.streams() {
			desc = "Success: " + rt.sse.event + " events, then end (or error)"
		}
		out["200"] = obj{"description": desc, "content": content}
	}
	for _, st := range rt.errorStatuses() {
		out[fmt.Sprint(st)] = obj{"$ref": "#/components/responses/" + errorResponseName(st)}
	}
	return out
}

func operationID(rt route) string {
	p := pathParamRE.ReplaceAllString(strings.TrimPrefix(rt.path, "/api/v1/"), "by_$1")
	p = strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(strings.Trim(p, "/"))
	return strings.ToLower(rt.method) + "_" + p
}

// checkRefs reports a $ref to a component that does not exist: a typo in
// a table would otherwise only surface in a client's tooling.
func checkRefs(doc obj) error {
	comps := doc["components"].(obj)
	var walk func(v any) error
	walk = func(v any) error {
		switch x := v.(type) {
		case obj:
			if r, ok := x["$ref"].(string); ok {
				kind, name, _ := strings.Cut(strings.TrimPrefix(r, "#/components/"), "/")
				if m, _ := comps[kind].(obj); m[name] == nil {
					return fmt.Errorf("unresolved $ref %s", r)
				}
			}
			for _, k := range sortedKeys(x) {
				if err := walk(x[k]); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range x {
				if err := walk(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(doc)
}
