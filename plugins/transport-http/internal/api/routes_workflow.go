package api

import (
	"encoding/json"
	"net/http"
)

var workflowStatuses = []string{"pending", "running", "paused", "completed", "failed", "cancelled"}

// maxListLimit bounds ?limit= on list routes (the daemon's u32).
const maxListLimit = 1<<32 - 1

var workflowEventStream = streamSpec{rpc: "workflow/events", event: "workflow-event", item: "WorkflowEvent"}

func (s *Server) workflowRoutes() []route {
	byID := func(r *http.Request) (any, error) {
		id, err := pathParam(r, "id")
		if err != nil {
			return nil, err
		}
		return params{"id": id}, nil
	}
	return []route{
		{method: http.MethodGet, path: "/api/v1/workflows", rpc: "workflow/list", summary: "List workflow runs",
			params: listDocs(workflowStatuses), out: "WorkflowList", handler: s.unary("workflow/list", listParams(workflowStatuses))},
		{method: http.MethodPost, path: "/api/v1/workflows/run", rpc: "workflow/run", body: requiredBody, in: "WorkflowRunBody",
			out: "WorkflowStarted", summary: "Run a workflow for a task; the caller's actor is attached", handler: s.unary("workflow/run", buildRun)},
		{method: http.MethodPost, path: "/api/v1/workflows/execute", rpc: "workflow/execute", body: requiredBody, in: "WorkflowExecuteBody",
			out: "WorkflowStarted", summary: "Execute a workflow definition; the caller's actor is attached", handler: s.unary("workflow/execute", buildExecute)},
		{method: http.MethodGet, path: "/api/v1/workflows/events", rpc: "workflow/events", sse: workflowEventStream,
			summary: "SSE stream of every workflow's events (event workflow-event); ends with event end",
			params:  []param{kindsParam()}, handler: s.workflowEvents(false)},
		{method: http.MethodGet, path: "/api/v1/workflows/{id}", rpc: "workflow/get", summary: "One workflow run",
			out: "WorkflowRun", handler: s.unary("workflow/get", byID)},
		{method: http.MethodPost, path: "/api/v1/workflows/{id}/pause", rpc: "workflow/pause", summary: "Pause a run",
			out: "Empty", handler: s.unary("workflow/pause", byID)},
		{method: http.MethodPost, path: "/api/v1/workflows/{id}/resume", rpc: "workflow/resume", body: optionalBody, in: "ResumeBody",
			out: "Empty", summary: "Resume a run, optionally with feedback", handler: s.unary("workflow/resume", idAndOptionalString("feedback"))},
		{method: http.MethodPost, path: "/api/v1/workflows/{id}/cancel", rpc: "workflow/cancel", body: optionalBody, in: "ReasonBody",
			out: "Empty", summary: "Cancel a run, optionally with a reason", handler: s.unary("workflow/cancel", idAndOptionalString("reason"))},
		{method: http.MethodGet, path: "/api/v1/workflows/{id}/events", rpc: "workflow/events", sse: workflowEventStream,
			summary: "SSE stream of one run's events (event workflow-event); ends with event end",
			params:  []param{kindsParam()}, handler: s.workflowEvents(true)},
	}
}

// listParams builds {status?, cursor?, limit?} for workflow/list and
// queue/list.
func listParams(statuses []string) builder {
	return func(r *http.Request) (any, error) {
		q := queryOf(r)
		status, err := q.enum("status", statuses)
		if err != nil {
			return nil, err
		}
		limit, err := q.uint("limit", maxListLimit)
		if err != nil {
			return nil, err
		}
		return params{}.set("status", status).set("cursor", q.str("cursor")).set("limit", limit), nil
	}
}

// withActor attaches the authenticated caller. A client may not name its
// own actor: who the caller is comes from the token, never from the body.
func withActor(r *http.Request, p params, bodyActor json.RawMessage) error {
	if present(bodyActor) {
		return badInput("field actor is set by the transport from the bearer token and must not be sent")
	}
	if a := actorFrom(r.Context()); a != nil {
		p["actor"] = a
	}
	return nil
}

func buildRun(r *http.Request) (any, error) {
	var b struct {
		TaskID     *string         `json:"task_id"`
		Definition *string         `json:"definition"`
		Params     json.RawMessage `json:"params"`
		Actor      json.RawMessage `json:"actor"`
	}
	if err := decodeBody(r, &b, true); err != nil {
		return nil, err
	}
	if err := requireString("task_id", b.TaskID); err != nil {
		return nil, err
	}
	if err := requireObject("params", b.Params); err != nil {
		return nil, err
	}
	p := params{}.set("task_id", b.TaskID).set("definition", b.Definition).set("params", b.Params)
	return p, withActor(r, p, b.Actor)
}

func buildExecute(r *http.Request) (any, error) {
	var b struct {
		Definition json.RawMessage `json:"definition"`
		Params     json.RawMessage `json:"params"`
		SubjectID  *string         `json:"subject_id"`
		Actor      json.RawMessage `json:"actor"`
	}
	if err := decodeBody(r, &b, true); err != nil {
		return nil, err
	}
	if !present(b.Definition) {
		return nil, badInput("field definition is required")
	}
	if err := requireObject("params", b.Params); err != nil {
		return nil, err
	}
	p := params{}.set("definition", b.Definition).set("params", b.Params).set("subject_id", b.SubjectID)
	return p, withActor(r, p, b.Actor)
}

// workflowEvents streams workflow/events {workflow_id?, kinds?}. The daemon
// cannot replay these, so Last-Event-ID is not honoured here.
func (s *Server) workflowEvents(one bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := params{}.set("kinds", queryOf(r).list("kinds"))
		if one {
			id, err := pathParam(r, "id")
			if err != nil {
				writeErr(w, asAPIError(err))
				return
			}
			p["workflow_id"] = id
		}
		s.serveStream(w, r, workflowEventStream, p)
	}
}
