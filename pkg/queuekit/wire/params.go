package wire

import (
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// The request types of queue 0.3.2 (queue.md §2.5, §3.4). Each is a
// pluginkit.ParamsDecoder: encoding/json would match keys
// case-insensitively and read null elements as "", so every type takes its
// params apart by hand. DecodeParams is called on a zero value with the
// params, or nil when the host sent none; its errors name the offending
// field, and pluginkit words them as the references do ("missing params
// for <method>", "invalid <method> params: <error>").

// requiredParams starts the DecodeParams of every method whose params are
// required: none at all is pluginkit.ErrMissingParams, anything but an
// object names the struct the reference expected.
func requiredParams(raw []byte, what string) (object, error) {
	if len(raw) == 0 {
		return nil, pluginkit.ErrMissingParams
	}
	return parseObject(raw, "struct "+what)
}

// EnqueueRequest is QueueEnqueueRequest.
type EnqueueRequest struct {
	Dispatch        Dispatch
	RunAt           *string // verbatim
	ExpireAfterSecs *uint64
}

// DecodeParams reads queue/enqueue params.
func (r *EnqueueRequest) DecodeParams(raw []byte) error {
	o, err := requiredParams(raw, "QueueEnqueueRequest")
	if err != nil {
		return err
	}
	d, ok := o["subject_dispatch"]
	if !ok {
		return missing("subject_dispatch")
	}
	if r.Dispatch, err = DecodeDispatch(d); err != nil || r.Dispatch.Subject == nil {
		// 0.7 made the subject optional; the 0.3.2 surface still needs
		// it, and reports it first, as before (the object is parsed
		// again only on this failure path).
		if inner, perr := parseObject(d, "struct SubjectDispatch"); perr == nil && inner.get("subject") == nil {
			return prefix("subject_dispatch", missing("subject"))
		}
		return prefix("subject_dispatch", err)
	}
	if r.RunAt, err = o.optString("run_at"); err != nil {
		return err
	}
	r.ExpireAfterSecs, err = o.optUint("expire_after_secs")
	return err
}

// ListRequest is QueueListRequest.
type ListRequest struct {
	Status []string // empty = every status
	Limit  *uint64  // nil = no limit (0.3.x)
	Offset uint64
}

// DecodeParams reads queue/list params; absent params mean the defaults.
// An explicit "status": null is read as an empty filter (the reference
// rejects it; queue.md §3.4 recommends accepting it).
func (r *ListRequest) DecodeParams(raw []byte) error {
	if rustjson.IsNull(raw) {
		return nil
	}
	o, err := parseObject(raw, "struct QueueListRequest")
	if err != nil {
		return err
	}
	if r.Status, _, err = o.optStrings("status"); err != nil {
		return err
	}
	if r.Limit, err = o.optUint("limit"); err != nil {
		return err
	}
	off, err := o.optUint("offset")
	if off != nil {
		r.Offset = *off
	}
	return err
}

// LeaseRequest is QueueLeaseRequest.
type LeaseRequest struct {
	Max uint64
	// WorkflowIDs is nil when the host sent none (the plugin mints ids).
	WorkflowIDs     []string
	ExcludeSubjects []string
}

// DecodeParams reads queue/lease params.
func (r *LeaseRequest) DecodeParams(raw []byte) error {
	o, err := requiredParams(raw, "QueueLeaseRequest")
	if err != nil {
		return err
	}
	if r.Max, err = o.reqUint("max"); err != nil {
		return err
	}
	ids, present, err := o.optStrings("workflow_ids")
	if err != nil {
		return err
	}
	if present && ids == nil {
		ids = []string{} // an empty list is a list: its length must match max
	}
	r.WorkflowIDs = ids
	r.ExcludeSubjects, _, err = o.optStrings("exclude_subjects")
	return err
}

// EntryRequest is {entry_id, reason?}, the params of hold, release and
// drop. Each method has its own type below only because serde names the
// struct in its errors ("expected struct QueueHoldRequest").
type EntryRequest struct {
	EntryID string
	Reason  *string
}

func (r *EntryRequest) decode(raw []byte, what string) error {
	o, err := requiredParams(raw, what)
	if err != nil {
		return err
	}
	if r.EntryID, err = o.reqString("entry_id"); err != nil {
		return err
	}
	r.Reason, err = o.optString("reason")
	return err
}

// HoldRequest is QueueHoldRequest; the references ignore its reason, the
// audit trail keeps it.
type HoldRequest struct{ EntryRequest }

// DecodeParams reads queue/hold params.
func (r *HoldRequest) DecodeParams(raw []byte) error { return r.decode(raw, "QueueHoldRequest") }

// ReleaseRequest is QueueReleaseRequest.
type ReleaseRequest struct{ EntryRequest }

// DecodeParams reads queue/release params.
func (r *ReleaseRequest) DecodeParams(raw []byte) error { return r.decode(raw, "QueueReleaseRequest") }

// DropRequest is QueueDropRequest.
type DropRequest struct{ EntryRequest }

// DecodeParams reads queue/drop params.
func (r *DropRequest) DecodeParams(raw []byte) error { return r.decode(raw, "QueueDropRequest") }

// ReorderRequest is QueueReorderRequest.
type ReorderRequest struct {
	EntryIDs []string
}

// DecodeParams reads queue/reorder params.
func (r *ReorderRequest) DecodeParams(raw []byte) error {
	o, err := requiredParams(raw, "QueueReorderRequest")
	if err != nil {
		return err
	}
	r.EntryIDs, err = o.reqStrings("entry_ids")
	return err
}

// MarkAssignedRequest is QueueMarkAssignedRequest.
type MarkAssignedRequest struct {
	EntryID    string
	WorkflowID *string
}

// DecodeParams reads queue/mark_assigned params.
func (r *MarkAssignedRequest) DecodeParams(raw []byte) error {
	o, err := requiredParams(raw, "QueueMarkAssignedRequest")
	if err != nil {
		return err
	}
	if r.EntryID, err = o.reqString("entry_id"); err != nil {
		return err
	}
	r.WorkflowID, err = o.optString("workflow_id")
	return err
}

// CompletionRequest is QueueCompletionRequest. Status is validated by the
// handler, after decoding, as the references do.
type CompletionRequest struct {
	EntryID     string
	Status      string
	WorkflowRef *string
	WorkflowID  *string
}

// DecodeParams reads queue/completion params.
func (r *CompletionRequest) DecodeParams(raw []byte) error {
	o, err := requiredParams(raw, "QueueCompletionRequest")
	if err != nil {
		return err
	}
	if r.EntryID, err = o.reqString("entry_id"); err != nil {
		return err
	}
	if r.Status, err = o.reqString("status"); err != nil {
		return err
	}
	if r.WorkflowRef, err = o.optString("workflow_ref"); err != nil {
		return err
	}
	r.WorkflowID, err = o.optString("workflow_id")
	return err
}

// ReleasePendingRequest is QueueReleasePendingParams; both fields are
// required.
type ReleasePendingRequest struct {
	EntryID string
	Reason  string
}

// DecodeParams reads queue/release_pending params.
func (r *ReleasePendingRequest) DecodeParams(raw []byte) error {
	o, err := requiredParams(raw, "QueueReleasePendingParams")
	if err != nil {
		return err
	}
	if r.EntryID, err = o.reqString("entry_id"); err != nil {
		return err
	}
	r.Reason, err = o.reqString("reason")
	return err
}

type prefixedError struct {
	field string
	err   error
}

func (e *prefixedError) Error() string { return e.field + ": " + e.err.Error() }
func (e *prefixedError) Unwrap() error { return e.err }

func prefix(field string, err error) error { return &prefixedError{field, err} }
