package fakedaemon

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

type listParams struct {
	Status *string `json:"status"`
	Cursor *string `json:"cursor"`
	Limit  *uint32 `json:"limit"`
}

func workflowList(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p listParams
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	status := ""
	if p.Status != nil {
		status = *p.Status
	}
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	runs := d.state.runs(status)
	if p.Limit != nil && int(*p.Limit) < len(runs) {
		runs = runs[:*p.Limit]
	}
	return map[string]any{"runs": runs}, nil
}

func idParam(params json.RawMessage) (string, *controlError) {
	var p struct {
		ID *string `json:"id"`
	}
	if e := decode(params, &p); e != nil {
		return "", e
	}
	if e := require("id", p.ID); e != nil {
		return "", e
	}
	return *p.ID, nil
}

// idReasonParams decodes {id, reason?} (workflow/cancel, queue/hold, …).
func idReasonParams(params json.RawMessage) (id string, reason *string, e *controlError) {
	var p struct {
		ID     *string `json:"id"`
		Reason *string `json:"reason"`
	}
	if e := decode(params, &p); e != nil {
		return "", nil, e
	}
	if e := require("id", p.ID); e != nil {
		return "", nil, e
	}
	return *p.ID, p.Reason, nil
}

func workflowGet(d *Daemon, params json.RawMessage) (any, *controlError) {
	id, e := idParam(params)
	if e != nil {
		return nil, e
	}
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	w := d.state.workflows[id]
	if w == nil {
		return nil, errf("not_found", "%s", id)
	}
	return w, nil
}

// workflowStart serves run {task_id, definition?, params?, actor?} and
// execute {definition, params?, subject_id?, actor?}; the actor is kept for
// ActorOf.
func workflowStart(method string) handler {
	return func(d *Daemon, params json.RawMessage) (any, *controlError) {
		var p struct {
			TaskID     *string         `json:"task_id"`
			Definition json.RawMessage `json:"definition"`
			Params     json.RawMessage `json:"params"`
			SubjectID  *string         `json:"subject_id"`
			Actor      json.RawMessage `json:"actor"`
		}
		if e := decode(params, &p); e != nil {
			return nil, e
		}
		def := "standard"
		if method == "workflow/run" {
			if e := require("task_id", p.TaskID); e != nil {
				return nil, e
			}
		} else if len(p.Definition) == 0 {
			return nil, invalidParamsText("missing field `definition`")
		}
		var name string
		if json.Unmarshal(p.Definition, &name) == nil && name != "" {
			def = name
		}
		now := stamp(time.Now())
		d.state.mu.Lock()
		defer d.state.mu.Unlock()
		id := d.state.next("wf")
		w := &WorkflowRun{ID: id, Definition: def, Status: "running", StartedAt: now, Detail: json.RawMessage(`{}`)}
		if p.TaskID != nil {
			w.SubjectID = *p.TaskID
		} else if p.SubjectID != nil {
			w.SubjectID = *p.SubjectID
		}
		d.state.workflows[id] = w
		d.state.wfOrder = append(d.state.wfOrder, id)
		if len(p.Actor) > 0 {
			d.state.actors[id] = p.Actor
		}
		return map[string]any{"workflow_id": id, "status": "running", "started_at": now}, nil
	}
}

func invalidParamsText(msg string) *controlError {
	return &controlError{code: -32602, message: "invalid params: " + msg}
}

// workflowTransition moves a run to "to": pause needs running, resume
// needs paused; anything else is a conflict.
func workflowTransition(to string) handler {
	from := map[string]string{"paused": "running", "running": "paused"}[to]
	return func(d *Daemon, params json.RawMessage) (any, *controlError) {
		id, e := idParam(params)
		if e != nil {
			return nil, e
		}
		d.state.mu.Lock()
		defer d.state.mu.Unlock()
		w := d.state.workflows[id]
		if w == nil {
			return nil, errf("not_found", "%s", id)
		}
		if w.Status != from {
			return nil, errf("conflict", "workflow %s is %s", id, w.Status)
		}
		w.Status = to
		return struct{}{}, nil
	}
}

func workflowCancel(d *Daemon, params json.RawMessage) (any, *controlError) {
	id, reason, e := idReasonParams(params)
	if e != nil {
		return nil, e
	}
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	w := d.state.workflows[id]
	if w == nil {
		return nil, errf("not_found", "%s", id)
	}
	if finished(w.Status) {
		return nil, errf("conflict", "workflow %s already %s", id, w.Status)
	}
	w.Status, w.FinishedAt = "cancelled", stamp(time.Now())
	if reason != nil {
		d.state.reasons[id] = *reason
	}
	return struct{}{}, nil
}

func queueList(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p listParams
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	out := []QueueEntry{}
	for _, q := range d.state.queue {
		if p.Status == nil || q.Status == *p.Status {
			out = append(out, *q)
		}
	}
	if p.Limit != nil && int(*p.Limit) < len(out) {
		out = out[:*p.Limit]
	}
	return map[string]any{"entries": out}, nil
}

func queueEnqueue(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p struct {
		TaskID   *string `json:"task_id"`
		Priority *uint8  `json:"priority"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if e := require("task_id", p.TaskID); e != nil {
		return nil, e
	}
	prio := 2
	if p.Priority != nil {
		if *p.Priority > 4 {
			return nil, errf("invalid_request", "priority must be 0-4")
		}
		prio = int(*p.Priority)
	}
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	q := &QueueEntry{ID: d.state.next("q"), SubjectID: *p.TaskID, Status: "ready", Priority: prio, EnqueuedAt: stamp(time.Now())}
	d.state.queue = append(d.state.queue, q)
	return q, nil
}

func queueMutate(op string) handler {
	return func(d *Daemon, params json.RawMessage) (any, *controlError) {
		id, reason, e := idReasonParams(params)
		if e != nil {
			return nil, e
		}
		d.state.mu.Lock()
		defer d.state.mu.Unlock()
		for i, q := range d.state.queue {
			if q.ID != id {
				continue
			}
			switch op {
			case "drop":
				d.state.queue = append(d.state.queue[:i], d.state.queue[i+1:]...)
			case "hold":
				q.Status, q.HoldReason = "held", ""
				if reason != nil {
					q.HoldReason = *reason
				}
			case "release":
				if q.Status != "held" {
					return nil, errf("conflict", "queue entry %s is not held", q.ID)
				}
				q.Status, q.HoldReason = "ready", ""
			}
			return struct{}{}, nil
		}
		return nil, errf("not_found", "queue entry %s", id)
	}
}

func queueReorder(d *Daemon, params json.RawMessage) (any, *controlError) {
	var p struct {
		ID         *string  `json:"id"`
		SubjectIDs []string `json:"subject_ids"`
		AnchorID   *string  `json:"anchor_id"`
		Position   *string  `json:"position"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if e := require("position", p.Position); e != nil {
		return nil, e
	}
	switch *p.Position {
	case "front", "back", "before", "after":
	default:
		return nil, invalidParamsText("unknown variant `" + *p.Position + "`, expected one of `front`, `back`, `before`, `after`")
	}
	return struct{}{}, nil
}

func queueStats(d *Daemon, _ json.RawMessage) (any, *controlError) {
	d.state.mu.Lock()
	defer d.state.mu.Unlock()
	st := map[string]int{"ready": 0, "held": 0, "in_flight": 0, "done_recent": 0, "dropped_recent": 0}
	key := map[string]string{"ready": "ready", "held": "held", "in-flight": "in_flight", "done": "done_recent", "dropped": "dropped_recent"}
	for _, q := range d.state.queue {
		st[key[q.Status]]++
	}
	return st, nil
}
