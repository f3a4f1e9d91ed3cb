package transporthttp

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/fakedaemon"
)

// routeCase is one HTTP exchange and what must reach the daemon.
type routeCase struct {
	method, path string
	body         any
	status       int
	code         string // error code for non-200
	// rpc is the control method the request must reach; "" means the
	// request must be answered without reaching the daemon at all.
	rpc string
	// params is the exact params the daemon must receive (JSON); "-" means
	// no params key; "" skips the check.
	params string
}

// Every route, its statuses and its envelope, through the binary and real
// HTTP against the fake daemon. The order matters: later cases see the
// state earlier ones left (wf-1 paused, then resumed, then cancelled; q-1
// held, then released, then dropped).
func TestEveryRoute(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	for i := 0; i < 3; i++ {
		g.d.EmitLog(fakedaemon.LogEntry{Message: "boot", Level: []string{"info", "warn", "error"}[i]})
	}
	cases := []routeCase{
		// daemon
		{"GET", "/api/v1/daemon/status", nil, 200, "", "daemon/status", "-"},
		{"GET", "/api/v1/daemon/health", nil, 200, "", "daemon/health", "-"},
		{"GET", "/api/v1/daemon/agents", nil, 200, "", "daemon/agents", "-"},
		{"GET", "/api/v1/daemon/metrics", nil, 200, "", "daemon/metrics", "-"},
		{"POST", "/api/v1/daemon/start", nil, 200, "", "daemon/start", "-"},
		{"POST", "/api/v1/daemon/stop", nil, 501, "not_supported", "daemon/stop", "-"},
		{"POST", "/api/v1/daemon/restart", nil, 501, "not_supported", "daemon/restart", "-"},
		{"GET", "/api/v1/daemon/logs?level=warn", nil, 200, "", "daemon/logs", `{"follow":false,"level":"warn"}`},
		{"GET", "/api/v1/daemon/logs?level=loud", nil, 400, "invalid_input", "", ""},
		{"GET", "/api/v1/daemon/logs?since=yesterday", nil, 400, "invalid_input", "", ""},
		{"DELETE", "/api/v1/daemon/logs", nil, 501, "not_implemented", "", ""},
		// workflows
		{"GET", "/api/v1/workflows?status=running&limit=5", nil, 200, "", "workflow/list", `{"status":"running","limit":5}`},
		{"GET", "/api/v1/workflows?status=stuck", nil, 400, "invalid_input", "", ""},
		{"GET", "/api/v1/workflows?limit=ten", nil, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/workflows/run", map[string]any{"task_id": "task:T-1", "params": map[string]int{"a": 1}}, 200, "", "workflow/run", `{"task_id":"task:T-1","params":{"a":1}}`},
		{"POST", "/api/v1/workflows/run", map[string]any{}, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/workflows/run", map[string]any{"task_id": 5}, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/workflows/run", map[string]any{"task_id": "t", "params": []int{1}}, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/workflows/run", map[string]any{"task_id": "t", "actor": map[string]string{"user_id": "root"}}, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/workflows/execute", map[string]any{"definition": "review", "subject_id": "task:T-2"}, 200, "", "workflow/execute", `{"definition":"review","subject_id":"task:T-2"}`},
		{"POST", "/api/v1/workflows/execute", map[string]any{"params": map[string]int{}}, 400, "invalid_input", "", ""},
		{"GET", "/api/v1/workflows/wf-1", nil, 200, "", "workflow/get", `{"id":"wf-1"}`},
		{"GET", "/api/v1/workflows/wf%2D1", nil, 200, "", "workflow/get", `{"id":"wf-1"}`},
		{"GET", "/api/v1/workflows/wf-404", nil, 404, "not_found", "workflow/get", `{"id":"wf-404"}`},
		{"GET", "/api/v1/workflows/run", nil, 405, "method_not_allowed", "", ""},
		{"GET", "/api/v1/subjects/next", nil, 405, "method_not_allowed", "", ""},
		{"POST", "/api/v1/workflows/wf-1/pause", nil, 200, "", "workflow/pause", `{"id":"wf-1"}`},
		{"POST", "/api/v1/workflows/wf-1/pause", nil, 409, "conflict", "workflow/pause", `{"id":"wf-1"}`},
		{"POST", "/api/v1/workflows/wf-1/resume", map[string]string{"feedback": "go on"}, 200, "", "workflow/resume", `{"id":"wf-1","feedback":"go on"}`},
		{"POST", "/api/v1/workflows/wf-1/cancel", map[string]string{"reason": "superseded"}, 200, "", "workflow/cancel", `{"id":"wf-1","reason":"superseded"}`},
		{"POST", "/api/v1/workflows/wf-2/cancel", nil, 409, "conflict", "workflow/cancel", `{"id":"wf-2"}`},
		// queue
		{"GET", "/api/v1/queue?status=in-flight", nil, 200, "", "queue/list", `{"status":"in-flight"}`},
		{"GET", "/api/v1/queue?status=inflight", nil, 400, "invalid_input", "", ""},
		{"GET", "/api/v1/queue/stats", nil, 200, "", "queue/stats", "-"},
		{"POST", "/api/v1/queue/enqueue", map[string]any{"task_id": "task:T-9", "priority": 4}, 200, "", "queue/enqueue", `{"task_id":"task:T-9","priority":4}`},
		{"POST", "/api/v1/queue/enqueue", map[string]any{"task_id": "task:T-9", "priority": 7}, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/queue/reorder", map[string]any{"id": "q-1", "position": "front"}, 200, "", "queue/reorder", `{"id":"q-1","position":"front"}`},
		{"POST", "/api/v1/queue/reorder", map[string]any{"id": "q-1", "position": "before"}, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/queue/reorder", map[string]any{"position": "sideways", "id": "q-1"}, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/queue/hold/q-1", map[string]string{"reason": "needs review"}, 200, "", "queue/hold", `{"id":"q-1","reason":"needs review"}`},
		{"POST", "/api/v1/queue/release/q-1", nil, 200, "", "queue/release", `{"id":"q-1"}`},
		{"POST", "/api/v1/queue/release/q-1", nil, 409, "conflict", "queue/release", `{"id":"q-1"}`},
		{"DELETE", "/api/v1/queue/drop/q-404", nil, 404, "not_found", "queue/drop", `{"id":"q-404"}`},
		{"DELETE", "/api/v1/queue/drop/q-1", nil, 200, "", "queue/drop", `{"id":"q-1"}`},
		// plugins
		{"GET", "/api/v1/plugin/list?kind=queue", nil, 200, "", "plugin/list", `{"kind":"queue","include_warnings":false}`},
		{"GET", "/api/v1/plugin/status", nil, 200, "", "plugin/status", "-"},
		{"GET", "/api/v1/plugin/info/animus-queue-sqlite", nil, 200, "", "plugin/info", `{"name":"animus-queue-sqlite"}`},
		{"GET", "/api/v1/plugin/info/nope", nil, 404, "not_found", "plugin/info", `{"name":"nope"}`},
		{"POST", "/api/v1/plugin/install", map[string]any{"source": "org/animus-plugin-x", "yes": true}, 200, "", "plugin/install", `{"source":"org/animus-plugin-x","yes":true}`},
		{"POST", "/api/v1/plugin/install", map[string]any{}, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/plugin/ping/animus-queue-sqlite", nil, 200, "", "plugin/ping", `{"name":"animus-queue-sqlite"}`},
		{"POST", "/api/v1/plugin/call", map[string]any{"name": "animus-subject-sqlite", "method": "task/list", "params": map[string]any{}}, 200, "", "plugin/call", `{"name":"animus-subject-sqlite","method":"task/list","params":{}}`},
		{"GET", "/api/v1/plugin/search?query=http&tag=web", nil, 200, "", "plugin/search", `{"query":"http","tag":"web"}`},
		{"GET", "/api/v1/plugin/browse?installed=true", nil, 200, "", "plugin/browse", `{"installed":true}`},
		{"GET", "/api/v1/plugin/browse?installed=yes", nil, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/plugin/update", map[string]any{"dry_run": true}, 200, "", "plugin/update", `{"dry_run":true}`},
		{"DELETE", "/api/v1/plugin/uninstall/animus-plugin-x", nil, 200, "", "plugin/uninstall", `{"name":"animus-plugin-x"}`},
		{"POST", "/api/v1/subject/animus-subject-sqlite/call", map[string]any{"method": "task/get", "params": map[string]string{"id": "task:T-1"}}, 200, "", "plugin/call", `{"name":"animus-subject-sqlite","method":"task/get","params":{"id":"task:T-1"}}`},
		{"POST", "/api/v1/subject/animus-subject-sqlite/call", map[string]any{"method": ""}, 400, "invalid_input", "", ""},
		// subjects
		{"GET", "/api/v1/subjects?kind=task&status=ready", nil, 200, "", "subject/list", `{"filter":{"kind":["task"],"status":["ready"]}}`},
		{"GET", "/api/v1/subjects", nil, 400, "invalid_input", "", ""},
		{"GET", "/api/v1/subjects?kind=task&status=doing", nil, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/subjects", map[string]any{"kind": "task", "title": "New", "priority": 3}, 200, "", "subject/create", `{"kind":"task","title":"New","priority":3}`},
		{"POST", "/api/v1/subjects", map[string]any{"kind": "task"}, 400, "invalid_input", "", ""},
		{"GET", "/api/v1/subjects/task:T-1", nil, 200, "", "subject/get", `{"id":"task:T-1"}`},
		{"GET", "/api/v1/subjects/T-1", nil, 400, "invalid_input", "", ""},
		{"GET", "/api/v1/subjects/task:T-404", nil, 404, "not_found", "subject/get", `{"id":"task:T-404"}`},
		{"PATCH", "/api/v1/subjects/task:T-1", map[string]any{"status": "blocked", "assignee": nil}, 200, "", "subject/update", `{"id":"task:T-1","patch":{"status":"blocked","assignee":null}}`},
		{"PATCH", "/api/v1/subjects/task:T-1", map[string]any{"status": "stuck"}, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/subjects/next", map[string]string{"kind": "task"}, 200, "", "subject/next", `{"kind":"task"}`},
		{"POST", "/api/v1/subjects/next", nil, 400, "invalid_input", "", ""},
		{"POST", "/api/v1/subjects/task:T-1/status", map[string]string{"status": "done"}, 200, "", "subject/status", `{"id":"task:T-1","status":"done"}`},
		// agents: the daemon does not support them; 501, not 502
		{"POST", "/api/v1/agent/run", map[string]string{"provider": "claude", "model": "m", "prompt": "hi"}, 501, "not_supported", "agent/run", `{"provider":"claude","model":"m","prompt":"hi"}`},
		{"POST", "/api/v1/agent/run", map[string]string{"provider": "claude"}, 400, "invalid_input", "", ""},
		{"GET", "/api/v1/agent/s-1/status", nil, 501, "not_supported", "agent/status", `{"id":"s-1"}`},
		{"POST", "/api/v1/agent/s-1/cancel", nil, 501, "not_supported", "agent/cancel", `{"session_id":"s-1"}`},
		// unknown route and method
		{"GET", "/api/v1/nope", nil, 404, "route_not_found", "", ""},
		{"PUT", "/api/v1/daemon/status", nil, 405, "method_not_allowed", "", ""},
	}
	for _, c := range cases {
		before := len(g.d.Requests())
		r := g.do(request{method: c.method, path: c.path, body: c.body})
		what := c.method + " " + c.path
		if c.status == 200 {
			wantOK(t, what, r, nil)
		} else {
			wantError(t, what, r, c.status, "", c.code)
		}
		var reqs []fakedaemon.Request
		for _, rq := range g.d.Requests()[before:] {
			if rq.Method != "$/cancelRequest" { // a finite daemon/logs stream is closed after the batch
				reqs = append(reqs, rq)
			}
		}
		if c.rpc == "" {
			if len(reqs) != 0 {
				t.Errorf("%s: reached the daemon (%s) although it must be answered locally", what, reqs[0].Method)
			}
			continue
		}
		if len(reqs) != 1 || reqs[0].Method != c.rpc {
			t.Errorf("%s: daemon received %v, want one %s", what, methodsOf(reqs), c.rpc)
			continue
		}
		checkParams(t, what, reqs[0].Params, c.params)
	}
	if got := g.d.CancelReason("wf-1"); got != "superseded" {
		t.Errorf("workflow/cancel reason reached the daemon as %q", got)
	}
}

func methodsOf(reqs []fakedaemon.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Method)
	}
	return out
}

func checkParams(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	switch want {
	case "":
		return
	case "-":
		if len(got) != 0 {
			t.Errorf("%s: params %s, want no params key", what, got)
		}
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: params %s: %v", what, got, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: params %s, want %s", what, got, want)
	}
}

// Envelope details: data is the daemon's result byte for byte in meaning,
// errors carry category, code, message and the daemon's rpc_code, and 405
// says which methods are allowed.
func TestEnvelopeShapes(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	var wf struct {
		ID     string          `json:"id"`
		Status string          `json:"status"`
		Detail json.RawMessage `json:"detail"`
	}
	wantOK(t, "workflow/get", g.get("/api/v1/workflows/wf-3"), &wf)
	if wf.ID != "wf-3" || wf.Status != "paused" || len(wf.Detail) == 0 {
		t.Errorf("data %+v, want the daemon's WorkflowRun", wf)
	}
	r := g.get("/api/v1/workflows/wf-404")
	wantError(t, "missing run", r, 404, "not_found", "not_found")
	if r.env.Error.RPCCode != -32602 || !strings.HasPrefix(r.env.Error.Message, "not found:") {
		t.Errorf("error %+v, want the daemon's -32602 and message", r.env.Error)
	}
	r = g.do(request{method: http.MethodPut, path: "/api/v1/workflows/wf-1"})
	wantError(t, "PUT on a GET route", r, 405, "invalid_request", "method_not_allowed")
	if allow := r.header.Values("Allow"); !reflect.DeepEqual(allow, []string{"GET"}) {
		t.Errorf("Allow %v, want [GET]", allow)
	}
	var logs []map[string]any
	g.d.EmitLog(fakedaemon.LogEntry{Message: "one"})
	g.d.EmitLog(fakedaemon.LogEntry{Message: "two"})
	wantOK(t, "daemon logs batch", g.get("/api/v1/daemon/logs?limit=1"), &logs)
	if len(logs) != 1 || logs[0]["message"] != "one" {
		t.Errorf("logs %v, want the first entry only", logs)
	}
	var info struct {
		ProjectRoot string   `json:"project_root"`
		Kinds       []string `json:"kinds"`
	}
	wantOK(t, "transport info", g.get("/api/v1/transport"), &info)
	if info.ProjectRoot != g.h.ProjectRoot() || len(info.Kinds) != 3 {
		t.Errorf("transport info %+v", info)
	}
	wantOK(t, "readyz", g.get("/readyz"), nil)
}

// openapi.json is the bare OpenAPI document (no envelope, so OpenAPI tools
// can read it) and describes every served route and nothing else: each
// described operation answers something other than 404 route_not_found.
// (The plugin's unit tests validate the document and every response
// against it with an OpenAPI validator.)
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	g := startGateway(t, setup{daemon: &fakedaemon.Options{}})
	r := g.get("/api/v1/openapi.json")
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("openapi.json: %d %s", r.status, r.header.Get("Content-Type"))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &top); err != nil {
		t.Fatalf("openapi.json is not a JSON object: %v", err)
	}
	for _, k := range []string{"ok", "data", "error"} {
		if _, enveloped := top[k]; enveloped {
			t.Errorf("openapi.json has the envelope's %q key", k)
		}
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" || len(doc.Paths) < 40 {
		t.Fatalf("openapi %s with %d paths", doc.OpenAPI, len(doc.Paths))
	}
	for _, p := range []string{"/api/v1/daemon/events", "/api/v1/workflows/{id}/events", "/api/v1/subjects/watch",
		"/api/v1/workflows/execute", "/api/v1/subjects/{id}", "/healthz", "/readyz"} {
		if doc.Paths[p] == nil {
			t.Errorf("openapi lacks %s", p)
		}
	}
	for path, ops := range doc.Paths {
		concrete := strings.NewReplacer("{id}", "x:1", "{name}", "x", "{plugin}", "x").Replace(path)
		for m := range ops {
			if strings.HasSuffix(path, "events") || strings.HasSuffix(path, "watch") {
				continue // streams: covered by the SSE tests
			}
			r := g.do(request{method: strings.ToUpper(m), path: concrete, body: map[string]any{}})
			if r.status == 404 && r.env.Error != nil && r.env.Error.Code == "route_not_found" {
				t.Errorf("%s %s is described but not served", m, path)
			}
		}
	}
}
