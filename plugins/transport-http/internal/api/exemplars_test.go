package api

import (
	"net/http"
	"strings"
	"testing"
)

// exemplar is one valid request to a route and the control call the
// route must make for it.
type exemplar struct {
	route  string // "METHOD pattern", as in the route table
	target string
	body   string
	rpc    string // the control method called; "" for a local route
	params string // the params sent, as JSON; "" when none are sent
	stream bool   // the answer is text/event-stream
}

// status is what the exemplar gets from a healthy daemon.
func (e exemplar) status() int {
	if e.route == "DELETE /api/v1/daemon/logs" {
		return http.StatusNotImplemented
	}
	return http.StatusOK
}

// exemplars covers every route of the table at least once (checked by
// TestOpenAPIRouterParity). List values use the repeated form, which is the
// one the document's explode=true describes; the comma form is covered by
// the request tests.
func exemplars() []exemplar {
	const at = "2030-01-01T00:00:00Z"
	return []exemplar{
		{route: "GET /healthz", target: "/healthz"},
		{route: "GET /readyz", target: "/readyz", rpc: "daemon/status"},
		{route: "GET /api/v1/openapi.json", target: "/api/v1/openapi.json"},
		{route: "GET /api/v1/transport", target: "/api/v1/transport"},

		{route: "GET /api/v1/daemon/status", target: "/api/v1/daemon/status", rpc: "daemon/status"},
		{route: "GET /api/v1/daemon/health", target: "/api/v1/daemon/health", rpc: "daemon/health"},
		{route: "GET /api/v1/daemon/agents", target: "/api/v1/daemon/agents", rpc: "daemon/agents"},
		{route: "GET /api/v1/daemon/metrics", target: "/api/v1/daemon/metrics", rpc: "daemon/metrics"},
		{route: "POST /api/v1/daemon/start", target: "/api/v1/daemon/start", rpc: "daemon/start"},
		{route: "POST /api/v1/daemon/stop", target: "/api/v1/daemon/stop", rpc: "daemon/stop"},
		{route: "POST /api/v1/daemon/restart", target: "/api/v1/daemon/restart", rpc: "daemon/restart"},
		{route: "GET /api/v1/daemon/logs", target: "/api/v1/daemon/logs?since=" + at + "&level=info&plugin=animus-queue-sqlite&limit=5",
			rpc: "daemon/logs", params: `{"since":"` + at + `","level":"info","plugin":"animus-queue-sqlite","follow":false}`},
		{route: "GET /api/v1/daemon/logs", target: "/api/v1/daemon/logs?follow=true&level=warn",
			rpc: "daemon/logs", params: `{"level":"warn","follow":true}`, stream: true},
		{route: "DELETE /api/v1/daemon/logs", target: "/api/v1/daemon/logs"},
		{route: "GET /api/v1/daemon/events", target: "/api/v1/daemon/events?since=" + at,
			rpc: "daemon/events", params: `{"since":"` + at + `"}`, stream: true},

		{route: "GET /api/v1/workflows", target: "/api/v1/workflows?status=running&cursor=c-1&limit=10",
			rpc: "workflow/list", params: `{"status":"running","cursor":"c-1","limit":10}`},
		{route: "POST /api/v1/workflows/run", target: "/api/v1/workflows/run", body: `{"task_id":"task:T-1","definition":"standard","params":{"k":1}}`,
			rpc: "workflow/run", params: `{"task_id":"task:T-1","definition":"standard","params":{"k":1}}`},
		{route: "POST /api/v1/workflows/execute", target: "/api/v1/workflows/execute", body: `{"definition":{"phases":["a"]},"subject_id":"task:T-1"}`,
			rpc: "workflow/execute", params: `{"definition":{"phases":["a"]},"subject_id":"task:T-1"}`},
		{route: "GET /api/v1/workflows/events", target: "/api/v1/workflows/events?kinds=phase_completed&kinds=phase_started",
			rpc: "workflow/events", params: `{"kinds":["phase_completed","phase_started"]}`, stream: true},
		{route: "GET /api/v1/workflows/{id}", target: "/api/v1/workflows/wf-1", rpc: "workflow/get", params: `{"id":"wf-1"}`},
		{route: "POST /api/v1/workflows/{id}/pause", target: "/api/v1/workflows/wf-1/pause", rpc: "workflow/pause", params: `{"id":"wf-1"}`},
		{route: "POST /api/v1/workflows/{id}/resume", target: "/api/v1/workflows/wf-1/resume", body: `{"feedback":"go on"}`,
			rpc: "workflow/resume", params: `{"id":"wf-1","feedback":"go on"}`},
		{route: "POST /api/v1/workflows/{id}/cancel", target: "/api/v1/workflows/wf-1/cancel", body: `{"reason":"superseded"}`,
			rpc: "workflow/cancel", params: `{"id":"wf-1","reason":"superseded"}`},
		{route: "GET /api/v1/workflows/{id}/events", target: "/api/v1/workflows/wf-1/events?kinds=phase_completed",
			rpc: "workflow/events", params: `{"workflow_id":"wf-1","kinds":["phase_completed"]}`, stream: true},

		{route: "GET /api/v1/queue", target: "/api/v1/queue?status=in-flight", rpc: "queue/list", params: `{"status":"in-flight"}`},
		{route: "GET /api/v1/queue/stats", target: "/api/v1/queue/stats", rpc: "queue/stats"},
		{route: "POST /api/v1/queue/enqueue", target: "/api/v1/queue/enqueue", body: `{"task_id":"task:T-9","priority":1}`,
			rpc: "queue/enqueue", params: `{"task_id":"task:T-9","priority":1}`},
		{route: "POST /api/v1/queue/reorder", target: "/api/v1/queue/reorder",
			body: `{"subject_ids":["task:T-1","task:T-3"],"anchor_id":"q-2","position":"after"}`,
			rpc:  "queue/reorder", params: `{"subject_ids":["task:T-1","task:T-3"],"anchor_id":"q-2","position":"after"}`},
		{route: "POST /api/v1/queue/hold/{id}", target: "/api/v1/queue/hold/q-1", body: `{"reason":"waiting"}`,
			rpc: "queue/hold", params: `{"id":"q-1","reason":"waiting"}`},
		{route: "POST /api/v1/queue/release/{id}", target: "/api/v1/queue/release/q-2", rpc: "queue/release", params: `{"id":"q-2"}`},
		{route: "DELETE /api/v1/queue/drop/{id}", target: "/api/v1/queue/drop/q-1", rpc: "queue/drop", params: `{"id":"q-1"}`},

		{route: "GET /api/v1/plugin/list", target: "/api/v1/plugin/list?kind=queue&include_warnings=true",
			rpc: "plugin/list", params: `{"kind":"queue","include_warnings":true}`},
		{route: "GET /api/v1/plugin/status", target: "/api/v1/plugin/status", rpc: "plugin/status"},
		{route: "GET /api/v1/plugin/info/{name}", target: "/api/v1/plugin/info/animus-queue-sqlite",
			rpc: "plugin/info", params: `{"name":"animus-queue-sqlite"}`},
		{route: "POST /api/v1/plugin/install", target: "/api/v1/plugin/install", body: `{"source":"animus-plugins/queue-sqlite","version":"0.2.0","yes":true}`,
			rpc: "plugin/install", params: `{"source":"animus-plugins/queue-sqlite","version":"0.2.0","yes":true}`},
		{route: "DELETE /api/v1/plugin/uninstall/{name}", target: "/api/v1/plugin/uninstall/animus-queue-sqlite",
			rpc: "plugin/uninstall", params: `{"name":"animus-queue-sqlite"}`},
		{route: "POST /api/v1/plugin/ping/{name}", target: "/api/v1/plugin/ping/animus-queue-sqlite",
			rpc: "plugin/ping", params: `{"name":"animus-queue-sqlite"}`},
		{route: "POST /api/v1/plugin/call", target: "/api/v1/plugin/call", body: `{"name":"animus-subject-sqlite","method":"task/list","params":{"limit":2}}`,
			rpc: "plugin/call", params: `{"name":"animus-subject-sqlite","method":"task/list","params":{"limit":2}}`},
		{route: "GET /api/v1/plugin/search", target: "/api/v1/plugin/search?query=http&kind=transport_backend",
			rpc: "plugin/search", params: `{"query":"http","kind":"transport_backend"}`},
		{route: "GET /api/v1/plugin/browse", target: "/api/v1/plugin/browse?installed=true&available=false",
			rpc: "plugin/browse", params: `{"installed":true,"available":false}`},
		{route: "POST /api/v1/plugin/update", target: "/api/v1/plugin/update", body: `{"name":"animus-queue-sqlite","dry_run":true}`,
			rpc: "plugin/update", params: `{"name":"animus-queue-sqlite","dry_run":true}`},
		{route: "POST /api/v1/subject/{plugin}/call", target: "/api/v1/subject/animus-subject-sqlite/call", body: `{"method":"task/get","params":{"id":"T-1"}}`,
			rpc: "plugin/call", params: `{"name":"animus-subject-sqlite","method":"task/get","params":{"id":"T-1"}}`},

		{route: "GET /api/v1/subjects", target: "/api/v1/subjects?kind=task&status=ready&status=blocked&labels_any=backend&limit=20",
			rpc: "subject/list", params: `{"filter":{"kind":["task"],"status":["ready","blocked"],"labels_any":["backend"],"limit":20}}`},
		{route: "POST /api/v1/subjects", target: "/api/v1/subjects", body: `{"kind":"task","title":"New task","priority":1,"labels":["x"],"custom":{"a":1}}`,
			rpc: "subject/create", params: `{"kind":"task","title":"New task","priority":1,"labels":["x"],"custom":{"a":1}}`},
		{route: "POST /api/v1/subjects/next", target: "/api/v1/subjects/next?kind=task", rpc: "subject/next", params: `{"kind":"task"}`},
		{route: "GET /api/v1/subjects/watch", target: "/api/v1/subjects/watch?kind=task", rpc: "subject/watch", params: `{"kind":"task"}`, stream: true},
		{route: "GET /api/v1/subjects/{id}", target: "/api/v1/subjects/task:T-1", rpc: "subject/get", params: `{"id":"task:T-1"}`},
		{route: "PATCH /api/v1/subjects/{id}", target: "/api/v1/subjects/task:T-1", body: `{"status":"in-progress","assignee":null,"labels_add":["x"]}`,
			rpc: "subject/update", params: `{"id":"task:T-1","patch":{"status":"in-progress","assignee":null,"labels_add":["x"]}}`},
		{route: "POST /api/v1/subjects/{id}/status", target: "/api/v1/subjects/task:T-1/status", body: `{"status":"done"}`,
			rpc: "subject/status", params: `{"id":"task:T-1","status":"done"}`},

		{route: "POST /api/v1/agent/run", target: "/api/v1/agent/run", body: `{"provider":"claude","model":"sonnet","prompt":"hi","env":{"A":"1"}}`,
			rpc: "agent/run", params: `{"provider":"claude","model":"sonnet","prompt":"hi","env":{"A":"1"}}`},
		{route: "GET /api/v1/agent/{id}/status", target: "/api/v1/agent/s-1/status", rpc: "agent/status", params: `{"id":"s-1"}`},
		{route: "POST /api/v1/agent/{id}/cancel", target: "/api/v1/agent/s-1/cancel", rpc: "agent/cancel", params: `{"session_id":"s-1"}`},
	}
}

// routeOf finds an exemplar's row in the table.
func routeOf(t *testing.T, s *Server, e exemplar) route {
	t.Helper()
	for _, rt := range s.routes {
		if rt.method+" "+rt.path == e.route {
			return rt
		}
	}
	t.Fatalf("exemplar %s has no route", e.route)
	return route{}
}

func (e exemplar) request() request {
	method, _, _ := strings.Cut(e.route, " ")
	return request{method: method, target: e.target, body: e.body}
}

// Every route makes the control call its exemplar expects, with exactly
// these params, and answers the daemon's result as data.
func TestRoutesCallTheDaemon(t *testing.T) {
	d := newFakeDaemon(t)
	d.setAll(reply{closed: "done"})
	h := newHarness(t, withAuth(nil), d)
	for _, e := range exemplars() {
		t.Run(e.target, func(t *testing.T) {
			before := len(d.received())
			x := h.on(t).do(e.request())
			if x.status != e.status() {
				t.Fatalf("%d %s", x.status, x.body)
			}
			calls := d.received()[before:]
			if e.rpc == "" {
				if len(calls) != 0 {
					t.Fatalf("a local route called %v", calls)
				}
				return
			}
			if len(calls) != 1 || calls[0].Method != e.rpc {
				t.Fatalf("calls %v, want one %s", calls, e.rpc)
			}
			got := string(calls[0].Params)
			if e.params == "" {
				if got != "" && got != "null" {
					t.Errorf("params %s, want none", got)
				}
			} else if !jsonEqual(t, got, e.params) {
				t.Errorf("params %s, want %s", got, e.params)
			}
			if !e.stream && e.rpc != "daemon/logs" && e.route != "GET /readyz" {
				var data any
				x.wantData(t, &data)
				if !jsonEqual(t, string(mustJSON(t, data)), string(fixture(e.rpc))) {
					t.Errorf("data is not the daemon's result: %s", x.body)
				}
			}
		})
	}
}
