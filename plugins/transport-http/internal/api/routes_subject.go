package api

import (
	"encoding/json"
	"net/http"
)

var subjectStatuses = []string{"ready", "in-progress", "blocked", "done", "cancelled"}

var subjectWatchStream = streamSpec{rpc: "subject/watch", event: "subject-changed", item: "SubjectChangedEvent"}

// subjectRoutes are the subject/* control methods the reference transport
// left out (subjects were reachable only through plugin/call).
func (s *Server) subjectRoutes() []route {
	return []route{
		{method: http.MethodGet, path: "/api/v1/subjects", rpc: "subject/list",
			summary: "List subjects of one or more kinds (kind is required); filters are AND-combined",
			params:  subjectListDocs(), out: "SubjectList",
			handler: s.unary("subject/list", buildSubjectList)},
		{method: http.MethodPost, path: "/api/v1/subjects", rpc: "subject/create", body: requiredBody, in: "SubjectCreateBody",
			out: "Subject", summary: "Create a subject", handler: s.unary("subject/create", buildSubjectCreate)},
		{method: http.MethodPost, path: "/api/v1/subjects/next", rpc: "subject/next", body: optionalBody, in: "SubjectNextBody",
			out: "SubjectNext", summary: "The next ready subject of a kind (kind from the body, else the query)",
			params: []param{qString("kind", "The subject kind, when the body does not name one")}, handler: s.unary("subject/next", buildSubjectNext)},
		{method: http.MethodGet, path: "/api/v1/subjects/watch", rpc: "subject/watch", sse: subjectWatchStream,
			summary: "SSE stream of subject changes (event subject-changed)", params: []param{qString("kind", "Only subjects of this kind")},
			handler: func(w http.ResponseWriter, r *http.Request) {
				s.serveStream(w, r, subjectWatchStream, params{}.set("kind", queryOf(r).str("kind")))
			}},
		{method: http.MethodGet, path: "/api/v1/subjects/{id}", rpc: "subject/get", summary: "One subject (id <kind>:<id>)",
			params: []param{subjectIDParam()}, out: "Subject", handler: s.unary("subject/get", func(r *http.Request) (any, error) {
				id, err := subjectPathID(r)
				return params{"id": id}, err
			})},
		{method: http.MethodPatch, path: "/api/v1/subjects/{id}", rpc: "subject/update", body: requiredBody, in: "SubjectPatch",
			params: []param{subjectIDParam()}, out: "Subject", summary: "Patch a subject (SubjectPatch)", handler: s.unary("subject/update", buildSubjectUpdate)},
		{method: http.MethodPost, path: "/api/v1/subjects/{id}/status", rpc: "subject/status", body: requiredBody, in: "SubjectStatusBody",
			params: []param{subjectIDParam()}, out: "Subject", summary: "Set a subject's status", handler: s.unary("subject/status", buildSubjectStatus)},
	}
}

func subjectPathID(r *http.Request) (string, error) {
	id, err := pathParam(r, "id")
	if err != nil {
		return "", err
	}
	return id, subjectID(id)
}

func buildSubjectList(r *http.Request) (any, error) {
	q := queryOf(r)
	kinds := q.list("kind")
	if len(kinds) == 0 {
		return nil, badInput("query parameter kind is required (the daemon lists one or more kinds)")
	}
	statuses := q.list("status")
	for _, st := range statuses {
		if err := oneOf("status", st, subjectStatuses); err != nil {
			return nil, err
		}
	}
	since, err := q.timestamp("updated_since")
	if err != nil {
		return nil, err
	}
	limit, err := q.uint("limit", maxListLimit)
	if err != nil {
		return nil, err
	}
	filter := params{"kind": kinds}.set("status", statuses).set("assignee", q.list("assignee")).
		set("labels_any", q.list("labels_any")).set("labels_all", q.list("labels_all")).
		set("updated_since", since).set("cursor", q.str("cursor")).set("limit", limit).
		set("native_status", q.str("native_status")).set("dispatch_label", q.str("dispatch_label")).
		set("has_attachment_kind", q.str("has_attachment_kind"))
	return params{"filter": filter}, nil
}

func buildSubjectCreate(r *http.Request) (any, error) {
	var b struct {
		Kind     *string         `json:"kind"`
		Title    *string         `json:"title"`
		Body     *string         `json:"body"`
		Status   *string         `json:"status"`
		Priority *int            `json:"priority"`
		Labels   []string        `json:"labels"`
		Assignee *string         `json:"assignee"`
		Custom   json.RawMessage `json:"custom"`
	}
	if err := decodeBody(r, &b, true); err != nil {
		return nil, err
	}
	if err := requireString("kind", b.Kind); err != nil {
		return nil, err
	}
	if err := requireString("title", b.Title); err != nil {
		return nil, err
	}
	if b.Status != nil {
		if err := oneOf("status", *b.Status, subjectStatuses); err != nil {
			return nil, err
		}
	}
	if err := rangeCheck("priority", b.Priority, 0, 4); err != nil {
		return nil, err
	}
	if err := requireObject("custom", b.Custom); err != nil {
		return nil, err
	}
	return params{}.set("kind", b.Kind).set("title", b.Title).set("body", b.Body).set("status", b.Status).
		set("priority", b.Priority).set("labels", b.Labels).set("assignee", b.Assignee).set("custom", b.Custom), nil
}

func buildSubjectNext(r *http.Request) (any, error) {
	var b struct {
		Kind *string `json:"kind"`
	}
	if err := decodeBody(r, &b, false); err != nil {
		return nil, err
	}
	if b.Kind == nil {
		b.Kind = queryOf(r).str("kind")
	}
	if err := requireString("kind", b.Kind); err != nil {
		return nil, err
	}
	return params{}.set("kind", b.Kind), nil
}

func buildSubjectUpdate(r *http.Request) (any, error) {
	id, err := subjectPathID(r)
	if err != nil {
		return nil, err
	}
	// The patch is passed on as sent (assignee null means "clear", which a
	// typed decode would lose); only its shape is checked here.
	var raw map[string]json.RawMessage
	if err := decodeBody(r, &raw, true); err != nil {
		return nil, err
	}
	var typed struct {
		Status       *string         `json:"status"`
		Assignee     *string         `json:"assignee"`
		LabelsAdd    []string        `json:"labels_add"`
		LabelsRemove []string        `json:"labels_remove"`
		Comment      *string         `json:"comment"`
		Custom       json.RawMessage `json:"custom"`
	}
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &typed); err != nil {
		return nil, jsonError(err)
	}
	if typed.Status != nil {
		if err := oneOf("status", *typed.Status, subjectStatuses); err != nil {
			return nil, err
		}
	}
	if err := requireObject("custom", typed.Custom); err != nil {
		return nil, err
	}
	return params{"id": id, "patch": raw}, nil
}

func buildSubjectStatus(r *http.Request) (any, error) {
	id, err := subjectPathID(r)
	if err != nil {
		return nil, err
	}
	var b struct {
		Status *string `json:"status"`
	}
	if err := decodeBody(r, &b, true); err != nil {
		return nil, err
	}
	if err := requireString("status", b.Status); err != nil {
		return nil, err
	}
	if err := oneOf("status", *b.Status, subjectStatuses); err != nil {
		return nil, err
	}
	return params{"id": id, "status": *b.Status}, nil
}
