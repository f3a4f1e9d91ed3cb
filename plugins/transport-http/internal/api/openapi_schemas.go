package api

import (
	"net/http"
	"strconv"
)

// obj is one JSON object of the OpenAPI document.
type obj = map[string]any

// The constructors below build JSON Schema 2020-12 (the OpenAPI 3.1
// dialect) in a few words each, so the schema tables read like the
// reference's type listings.

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func withDesc(o obj, desc string) obj {
	if desc != "" {
		o["description"] = desc
	}
	return o
}

func object(desc string, required []string, props obj) obj {
	o := obj{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return withDesc(o, desc)
}

// closed forbids properties beyond the listed ones: used for the shapes the
// transport itself writes, never for the daemon's, which may grow.
func closed(o obj) obj {
	o["additionalProperties"] = false
	return o
}

func str(desc string) obj { return withDesc(obj{"type": "string"}, desc) }

// nonBlank is a string requireString accepts: not empty, not only spaces.
func nonBlank(desc string) obj { return withDesc(obj{"type": "string", "pattern": `\S`}, desc) }

func dateTime(desc string) obj {
	return withDesc(obj{"type": "string", "format": "date-time"}, desc)
}

func boolean(desc string) obj { return withDesc(obj{"type": "boolean"}, desc) }

func count(desc string) obj { return withDesc(obj{"type": "integer", "minimum": 0}, desc) }

func intRange(lo, hi int, desc string) obj {
	return withDesc(obj{"type": "integer", "minimum": lo, "maximum": hi}, desc)
}

func enum(values []string, desc string) obj {
	return withDesc(obj{"type": "string", "enum": values}, desc)
}

func constant(v any, desc string) obj { return withDesc(obj{"const": v}, desc) }

func arrayOf(items obj, desc string) obj {
	return withDesc(obj{"type": "array", "items": items}, desc)
}

// anyJSON is the empty schema: any JSON value.
func anyJSON(desc string) obj { return withDesc(obj{}, desc) }

// transportSchemas are the shapes the transport itself writes: the
// envelope, the error, and the local routes' data.
func transportSchemas() map[string]obj {
	return map[string]obj{
		"Error": closed(object("What went wrong. code is a stable machine string; category is the daemon's data.category "+
			"for daemon errors, or the transport's own.", []string{"category", "code", "message"}, obj{
			"category": str("The error's category: the daemon's data.category, or the transport's own"),
			"code":     str("Stable machine-readable code"),
			"message":  str("Human-readable text"),
			"rpc_code": withDesc(obj{"type": "integer"},
				"The daemon's JSON-RPC error code; only on errors the daemon returned"),
		})),
		"ErrorEnvelope": closed(object("Every error response", []string{"ok", "error"}, obj{
			"ok":    constant(false, ""),
			"error": ref("Error"),
		})),
		"Health": closed(object("Liveness", []string{"status", "started_at", "uptime_ms"}, obj{
			"status":     constant("ok", ""),
			"started_at": dateTime("When the listener started"),
			"uptime_ms":  count("Milliseconds since started_at"),
		})),
		"Ready": closed(object("Readiness: the daemon answered daemon/status", []string{"status", "daemon"}, obj{
			"status": constant("ready", ""),
			"daemon": constant("reachable", ""),
		})),
		"TransportDetails": obj{
			"description": "TransportInfo (what transport/start answered) and what else the listener knows",
			"allOf": []any{ref("TransportInfo"), object("", []string{"project_root", "kinds", "auth"}, obj{
				"project_root": str("TransportConfig.project_root"),
				"kinds":        arrayOf(str(""), "TransportSchema.kinds"),
				"auth":         boolean("Whether a bearer token is required"),
			})},
		},
		"OpenAPIDocument": object("An OpenAPI 3.1 document (this one)", []string{"openapi", "info", "paths"}, obj{
			"openapi": withDesc(obj{"type": "string", "pattern": `^3\.1\.\d+$`}, ""),
			"info":    obj{"type": "object"},
			"paths":   obj{"type": "object"},
		}),
		"StreamEnd": closed(object("Data of the SSE event end: the stream is finished; do not reconnect", []string{"reason"}, obj{
			"reason": str("subscription/closed's reason, \"stream ended\", or \"transport shutting down\""),
		})),
		"StreamError": closed(object("Data of the SSE event error: the daemon connection was lost; reconnect later",
			[]string{"reason"}, obj{"reason": str("")})),
	}
}

// errorCodes lists, per status, the codes and categories an error envelope
// with that status can carry (envelope.go and the middleware in
// security.go). A daemon category the transport does not know is a 500
// with that category as its code, so 500 leaves both open.
var errorCodes = map[int]struct {
	codes, categories []string
	when              string
}{
	http.StatusBadRequest: {[]string{"invalid_input", "invalid_request"}, []string{"invalid_request"},
		"The input is invalid: rejected by the transport before any daemon call (invalid_input), or by the daemon"},
	http.StatusUnauthorized: {[]string{"unauthenticated"}, []string{"unauthenticated"},
		"No accepted bearer token (a missing and a wrong token look alike)"},
	http.StatusForbidden: {[]string{"forbidden_host", "forbidden_origin", "permission_denied"}, []string{"permission_denied"},
		"The Host header or the Origin is not allowed, or the daemon denied the call"},
	http.StatusNotFound: {[]string{"not_found"}, []string{"not_found"}, "The daemon has no such resource"},
	http.StatusConflict: {[]string{"conflict"}, []string{"conflict"}, "The resource is not in a state that allows this"},
	http.StatusRequestEntityTooLarge: {[]string{"payload_too_large"}, []string{"invalid_request"},
		"The request body exceeds max_body_bytes"},
	http.StatusUnsupportedMediaType: {[]string{"unsupported_media_type"}, []string{"invalid_request"},
		"A request body was sent without Content-Type: application/json"},
	http.StatusInternalServerError: {nil, nil,
		"An internal error: the daemon's (category internal, or one the transport does not know) or the transport's"},
	http.StatusNotImplemented: {[]string{"not_supported", "unknown_method", "not_implemented"}, []string{"not_supported"},
		"The daemon does not support this method (unknown_method: an older daemon without it)"},
	http.StatusBadGateway: {[]string{"wire_error"}, []string{"unavailable"},
		"The daemon connection closed mid-call, or its reply was not JSON-RPC"},
	http.StatusServiceUnavailable: {
		[]string{"unavailable", "daemon_unreachable", "shutting_down", "cancelled", "too_many_streams"}, []string{"unavailable"},
		"The daemon cannot be reached or is unavailable, the transport is shutting down, or too many streams are open"},
	http.StatusGatewayTimeout: {[]string{"daemon_timeout"}, []string{"timeout"},
		"The daemon did not answer within control_timeout_ms"},
}

// errorResponses are components/responses: one per error status, named by
// it ("E404"), each an ErrorEnvelope narrowed to that status's codes.
func errorResponses() obj {
	out := obj{}
	for status, c := range errorCodes {
		schema := ref("ErrorEnvelope")
		if c.codes != nil {
			schema = obj{"allOf": []any{ref("ErrorEnvelope"), object("", nil, obj{
				"error": object("", nil, obj{"code": enum(c.codes, ""), "category": enum(c.categories, "")}),
			})}}
		}
		resp := obj{
			"description": http.StatusText(status) + ": " + c.when,
			"content":     obj{"application/json": obj{"schema": schema}},
		}
		if status == http.StatusUnauthorized {
			resp["headers"] = obj{"WWW-Authenticate": obj{
				"description": `Always Bearer realm="animus"`, "required": true, "schema": str(""),
			}}
		}
		out[errorResponseName(status)] = resp
	}
	return out
}

func errorResponseName(status int) string { return "E" + strconv.Itoa(status) }

// bodySchemas are the request bodies, as the builders in routes_*.go
// decode and check them. Unknown fields are ignored by the builders, so no
// body is closed. A field the builders treat as absent when null is still
// described by its type alone: null is accepted, not advertised.
func bodySchemas() map[string]obj {
	params := withDesc(obj{"type": []any{"object", "null"}}, "Workflow parameters")
	noActor := withDesc(obj{"type": "null"},
		"Must not be sent: the actor comes from the bearer token (any other value is a 400)")
	return map[string]obj{
		"WorkflowRunBody": object("", []string{"task_id"}, obj{
			"task_id":    nonBlank("The task to run the workflow for"),
			"definition": str("Workflow definition name; the daemon's default when absent"),
			"params":     params,
			"actor":      noActor,
		}),
		"WorkflowExecuteBody": object("", []string{"definition"}, obj{
			"definition": withDesc(obj{"not": obj{"type": "null"}}, "A definition name or an inline definition"),
			"params":     params,
			"subject_id": str("The subject the run is about"),
			"actor":      noActor,
		}),
		"ResumeBody": object("", nil, obj{"feedback": str("Passed to the paused phase")}),
		"ReasonBody": object("", nil, obj{"reason": str("Kept with the run or entry")}),

		"EnqueueBody": object("", []string{"task_id"}, obj{
			"task_id":  nonBlank(""),
			"priority": intRange(0, 4, "Default 2"),
		}),
		"ReorderBody": withReorderRules(object("Exactly one of id and subject_ids", []string{"position"}, obj{
			"id":          str("A queue entry id"),
			"subject_ids": withDesc(obj{"type": "array", "items": str(""), "minItems": 1}, "Subject ids"),
			"anchor_id":   str("The entry to move before or after"),
			"position":    enum(reorderPosition, ""),
		})),

		"PluginInstallBody": object("", []string{"source"}, obj{
			"source":         nonBlank("OWNER/REPO or a path"),
			"version":        str(""),
			"yes":            boolean("Default false"),
			"allow_unsigned": boolean("Default false"),
		}),
		"PluginCallBody": object("", []string{"name", "method"}, obj{
			"name":   nonBlank("Plugin name"),
			"method": nonBlank("Plugin method"),
			"params": anyJSON("Passed to the plugin as is"),
		}),
		"SubjectCallBody": object("", []string{"method"}, obj{
			"method": nonBlank("Plugin method"),
			"params": anyJSON("Passed to the plugin as is"),
		}),
		"PluginUpdateBody": object("", nil, obj{
			"name":    str("Only this plugin"),
			"tag":     str(""),
			"dry_run": boolean("Default false"),
		}),

		"SubjectCreateBody": object("", []string{"kind", "title"}, obj{
			"kind":     nonBlank(""),
			"title":    nonBlank(""),
			"body":     str(""),
			"status":   ref("SubjectStatus"),
			"priority": intRange(0, 4, ""),
			"labels":   arrayOf(str(""), ""),
			"assignee": str(""),
			"custom":   withDesc(obj{"type": []any{"object", "null"}}, "Backend-specific fields"),
		}),
		"SubjectNextBody":   object("", nil, obj{"kind": nonBlank("The subject kind (else ?kind=)")}),
		"SubjectStatusBody": object("", []string{"status"}, obj{"status": ref("SubjectStatus")}),

		"AgentRunBody": object("", []string{"provider", "model", "prompt"}, obj{
			"provider": nonBlank(""),
			"model":    nonBlank(""),
			"prompt":   nonBlank(""),
			"system":   str(""),
			"cwd":      str(""),
			"env":      withDesc(obj{"type": "object", "additionalProperties": str("")}, ""),
		}),
	}
}

// withReorderRules adds buildReorder's cross-field rules: exactly one of
// id and subject_ids, and an anchor for before and after.
func withReorderRules(o obj) obj {
	o["oneOf"] = []any{obj{"required": []string{"id"}}, obj{"required": []string{"subject_ids"}}}
	o["if"] = obj{"required": []string{"position"}, "properties": obj{"position": enum([]string{"before", "after"}, "")}}
	o["then"] = obj{"required": []string{"anchor_id"}, "properties": obj{"anchor_id": obj{"minLength": 1}}}
	return o
}
