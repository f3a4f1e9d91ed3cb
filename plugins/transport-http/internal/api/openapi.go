package api

import (
	"net/http"
	"regexp"
	"strings"
)

var pathParamRE = regexp.MustCompile(`\{([^}/]+)\}`)

// openapi serves an OpenAPI 3.1 description built from the route table, so
// every served route is described and nothing else is.
func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) {
	writeData(w, s.OpenAPI())
}

// OpenAPI returns the description as a JSON-ready value.
func (s *Server) OpenAPI() map[string]any {
	paths := map[string]map[string]any{}
	for _, rt := range s.routes {
		op := map[string]any{
			"summary":     rt.summary,
			"operationId": operationID(rt),
			"responses":   responses(rt),
		}
		if rt.rpc != "" {
			op["x-control-method"] = rt.rpc
		}
		if rt.public {
			op["security"] = []any{}
		}
		var ps []any
		for _, m := range pathParamRE.FindAllStringSubmatch(rt.path, -1) {
			ps = append(ps, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]string{"type": "string"}})
		}
		for _, q := range rt.query {
			ps = append(ps, map[string]any{"name": q, "in": "query", "required": false, "schema": map[string]string{"type": "string"}})
		}
		if rt.stream {
			ps = append(ps, map[string]any{"name": "Last-Event-ID", "in": "header", "required": false, "schema": map[string]string{"type": "string"}})
		}
		if len(ps) > 0 {
			op["parameters"] = ps
		}
		if rt.body != noBody {
			op["requestBody"] = map[string]any{
				"required": rt.body == requiredBody,
				"content":  map[string]any{"application/json": map[string]any{"schema": map[string]string{"type": "object"}}},
			}
		}
		if paths[rt.path] == nil {
			paths[rt.path] = map[string]any{}
		}
		paths[rt.path][strings.ToLower(rt.method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "Animus daemon HTTP API (animus-transport-http)",
			"version":     "1",
			"description": "REST and Server-Sent Events gateway to the Animus daemon's control socket.",
		},
		"security": []any{map[string]any{"bearer": []any{}}},
		"paths":    paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]string{"type": "http", "scheme": "bearer"}},
			"schemas": map[string]any{
				"Ok": map[string]any{"type": "object", "required": []string{"ok", "data"},
					"properties": map[string]any{"ok": map[string]any{"const": true}, "data": map[string]any{}}},
				"Error": map[string]any{"type": "object", "required": []string{"ok", "error"},
					"properties": map[string]any{
						"ok": map[string]any{"const": false},
						"error": map[string]any{"type": "object", "required": []string{"category", "code", "message"},
							"properties": map[string]any{
								"category": map[string]string{"type": "string"},
								"code":     map[string]string{"type": "string"},
								"message":  map[string]string{"type": "string"},
								"rpc_code": map[string]string{"type": "integer"},
							}},
					}},
			},
		},
	}
}

func responses(rt route) map[string]any {
	errRef := map[string]any{"description": "Error envelope; the status follows error.category",
		"content": map[string]any{"application/json": map[string]any{"schema": map[string]string{"$ref": "#/components/schemas/Error"}}}}
	if rt.stream {
		return map[string]any{
			"200": map[string]any{"description": "text/event-stream; a final event end when the stream finishes",
				"content": map[string]any{"text/event-stream": map[string]any{"schema": map[string]string{"type": "string"}}}},
			"default": errRef,
		}
	}
	return map[string]any{
		"200": map[string]any{"description": "Success envelope; data is the control method's result",
			"content": map[string]any{"application/json": map[string]any{"schema": map[string]string{"$ref": "#/components/schemas/Ok"}}}},
		"default": errRef,
	}
}

func operationID(rt route) string {
	p := pathParamRE.ReplaceAllString(strings.TrimPrefix(rt.path, "/api/v1/"), "by_$1")
	p = strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(strings.Trim(p, "/"))
	return strings.ToLower(rt.method) + "_" + p
}
