package api

import (
	"net/http"
)

var (
	queueStatuses   = []string{"ready", "held", "in-flight", "done", "dropped"}
	reorderPosition = []string{"front", "back", "before", "after"}
)

func (s *Server) queueRoutes() []route {
	byID := func(r *http.Request) (any, error) {
		id, err := pathParam(r, "id")
		if err != nil {
			return nil, err
		}
		return params{"id": id}, nil
	}
	return []route{
		{method: http.MethodGet, path: "/api/v1/queue", rpc: "queue/list", summary: "List queue entries",
			params: listDocs(queueStatuses), out: "QueueList", handler: s.unary("queue/list", listParams(queueStatuses))},
		{method: http.MethodGet, path: "/api/v1/queue/stats", rpc: "queue/stats", summary: "Queue counters",
			out: "QueueStats", handler: s.unary("queue/stats", nil)},
		{method: http.MethodPost, path: "/api/v1/queue/enqueue", rpc: "queue/enqueue", body: requiredBody, in: "EnqueueBody",
			out: "QueueEntry", summary: "Enqueue a task (priority 0-4, default 2)", handler: s.unary("queue/enqueue", buildEnqueue)},
		{method: http.MethodPost, path: "/api/v1/queue/reorder", rpc: "queue/reorder", body: requiredBody, in: "ReorderBody",
			out: "Empty", summary: "Move entries to the front, the back, or before/after an anchor", handler: s.unary("queue/reorder", buildReorder)},
		{method: http.MethodPost, path: "/api/v1/queue/hold/{id}", rpc: "queue/hold", body: optionalBody, in: "ReasonBody",
			out: "Empty", summary: "Hold an entry, optionally with a reason", handler: s.unary("queue/hold", idAndOptionalString("reason"))},
		// release never reads its body (the reference ignored it too), so
		// none is described and none can fail.
		{method: http.MethodPost, path: "/api/v1/queue/release/{id}", rpc: "queue/release",
			out: "Empty", summary: "Release a held entry (a body, if sent, is ignored)", handler: s.unary("queue/release", byID)},
		{method: http.MethodDelete, path: "/api/v1/queue/drop/{id}", rpc: "queue/drop", summary: "Drop an entry",
			out: "Empty", handler: s.unary("queue/drop", byID)},
	}
}

func buildEnqueue(r *http.Request) (any, error) {
	var b struct {
		TaskID   *string `json:"task_id"`
		Priority *int    `json:"priority"`
	}
	if err := decodeBody(r, &b, true); err != nil {
		return nil, err
	}
	if err := requireString("task_id", b.TaskID); err != nil {
		return nil, err
	}
	if err := rangeCheck("priority", b.Priority, 0, 4); err != nil {
		return nil, err
	}
	return params{}.set("task_id", b.TaskID).set("priority", b.Priority), nil
}

func buildReorder(r *http.Request) (any, error) {
	var b struct {
		ID         *string  `json:"id"`
		SubjectIDs []string `json:"subject_ids"`
		AnchorID   *string  `json:"anchor_id"`
		Position   *string  `json:"position"`
	}
	if err := decodeBody(r, &b, true); err != nil {
		return nil, err
	}
	if err := requireString("position", b.Position); err != nil {
		return nil, err
	}
	if err := oneOf("position", *b.Position, reorderPosition); err != nil {
		return nil, err
	}
	if (b.ID == nil) == (len(b.SubjectIDs) == 0) {
		return nil, badInput("exactly one of id and subject_ids is required")
	}
	if (*b.Position == "before" || *b.Position == "after") && (b.AnchorID == nil || *b.AnchorID == "") {
		return nil, badInput("position %s needs anchor_id", *b.Position)
	}
	return params{}.set("id", b.ID).set("subject_ids", b.SubjectIDs).set("anchor_id", b.AnchorID).set("position", b.Position), nil
}
