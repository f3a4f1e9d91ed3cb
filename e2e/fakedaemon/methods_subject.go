package fakedaemon

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

var subjectStatuses = map[string]bool{"ready": true, "in-progress": true, "blocked": true, "done": true, "cancelled": true}

// subjectList needs filter.kind, as the daemon (it asks each kind's plugin).
func subjectList(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p struct {
		Filter struct {
			Kind   []string `json:"kind"`
			Status []string `json:"status"`
			Limit  *uint32  `json:"limit"`
		} `json:"filter"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if len(p.Filter.Kind) == 0 {
		return nil, errf("invalid_request", "subject/list needs filter.kind")
	}
	kinds, statuses := set(p.Filter.Kind), set(p.Filter.Status)
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	subs := d.state.sortedSubjects(kinds, statuses)
	if p.Filter.Limit != nil && int(*p.Filter.Limit) < len(subs) {
		subs = subs[:*p.Filter.Limit]
	}
	return map[string]any{"subjects": subs, "fetched_at": stamp(time.Now())}, nil
}

func set(xs []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// subjectByID checks the <kind>:<native> form the daemon routes on.
func subjectByID(d *Daemon, id string) (*Subject, *controlError) {
	kind, native, ok := strings.Cut(id, ":")
	if !ok || kind == "" || native == "" {
		return nil, errf("invalid_request", "subject id %q has no <kind>: prefix", id)
	}
	s := d.state.subjects[id]
	if s == nil {
		return nil, errf("not_found", "%s", id)
	}
	return s, nil
}

func subjectGet(d *Daemon, params json.RawMessage) (any, *controlError) {
	id, e := idParam(params)
	if e != nil {
		return nil, e
	}
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	return subjectByID(d, id)
}

func subjectCreate(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p struct {
		Kind     *string         `json:"kind"`
		Title    *string         `json:"title"`
		Body     *string         `json:"body"`
		Status   *string         `json:"status"`
		Priority *int            `json:"priority"`
		Labels   []string        `json:"labels"`
		Assignee *string         `json:"assignee"`
		Custom   json.RawMessage `json:"custom"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if e := require("kind", p.Kind); e != nil {
		return nil, e
	}
	if e := require("title", p.Title); e != nil {
		return nil, e
	}
	now := stamp(time.Now())
	d.state.mu.Lock()
	d.state.seq++
	s := &Subject{ID: fmt.Sprintf("%s:%d", *p.Kind, d.state.seq), Kind: *p.Kind, Title: *p.Title, Status: "ready",
		Priority: p.Priority, Labels: p.Labels, CreatedAt: now, UpdatedAt: now, Custom: p.Custom}
	if p.Body != nil {
		s.Body = *p.Body
	}
	if p.Status != nil {
		s.Status = *p.Status
	}
	if p.Assignee != nil {
		s.Assignee = *p.Assignee
	}
	d.state.subjects[s.ID] = s
	c := *s
	d.state.mu.Unlock()
	d.EmitSubjectChanged("created", c)
	return c, nil
}

func subjectUpdate(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p struct {
		ID    *string `json:"id"`
		Patch struct {
			Status    *string         `json:"status"`
			Assignee  json.RawMessage `json:"assignee"`
			LabelsAdd []string        `json:"labels_add"`
			Comment   *string         `json:"comment"`
		} `json:"patch"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if e := require("id", p.ID); e != nil {
		return nil, e
	}
	d.state.mu.Lock()
	s, e := subjectByID(d, *p.ID)
	if e != nil {
		d.state.mu.Unlock()
		return nil, e
	}
	if p.Patch.Status != nil {
		s.Status = *p.Patch.Status
	}
	switch string(p.Patch.Assignee) {
	case "":
	case "null":
		s.Assignee = ""
	default:
		_ = json.Unmarshal(p.Patch.Assignee, &s.Assignee)
	}
	s.Labels = append(s.Labels, p.Patch.LabelsAdd...)
	s.UpdatedAt = stamp(time.Now())
	c := *s
	d.state.mu.Unlock()
	d.EmitSubjectChanged("updated", c)
	return c, nil
}

func subjectNext(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p struct {
		Kind *string `json:"kind"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if p.Kind == nil {
		return nil, errf("invalid_request", "subject/next needs kind")
	}
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	for _, s := range d.state.sortedSubjects(map[string]bool{*p.Kind: true}, map[string]bool{"ready": true}) {
		return map[string]any{"subject": s}, nil
	}
	return map[string]any{}, nil
}

func subjectStatus(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p struct {
		ID     *string `json:"id"`
		Status *string `json:"status"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if e := require("id", p.ID); e != nil {
		return nil, e
	}
	if e := require("status", p.Status); e != nil {
		return nil, e
	}
	if !subjectStatuses[*p.Status] {
		return nil, invalidParamsText("unknown variant `" + *p.Status + "`")
	}
	d.state.mu.Lock()
	s, e := subjectByID(d, *p.ID)
	if e != nil {
		d.state.mu.Unlock()
		return nil, e
	}
	s.Status, s.UpdatedAt = *p.Status, stamp(time.Now())
	c := *s
	d.state.mu.Unlock()
	d.EmitSubjectChanged("status-changed", c)
	return c, nil
}
