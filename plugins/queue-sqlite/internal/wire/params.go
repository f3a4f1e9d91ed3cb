package wire

import (
	"encoding/json"
)

// The request types of queue 0.3.2 (queue.md §2.5, §3.4). Each Decode
// function takes the params of a request that carried some (the caller
// answers "missing params for <method>" itself) and returns an error that
// names the offending field.

// EnqueueRequest is QueueEnqueueRequest.
type EnqueueRequest struct {
	Dispatch        Dispatch
	RunAt           *string // verbatim
	ExpireAfterSecs *uint64
}

// DecodeEnqueue reads queue/enqueue params.
func DecodeEnqueue(raw json.RawMessage) (EnqueueRequest, error) {
	o, err := parseObject(raw, "struct QueueEnqueueRequest")
	if err != nil {
		return EnqueueRequest{}, err
	}
	var r EnqueueRequest
	d, ok := o["subject_dispatch"]
	if !ok {
		return r, missing("subject_dispatch")
	}
	if r.Dispatch, err = DecodeDispatch(d); err != nil {
		return r, prefix("subject_dispatch", err)
	}
	if r.RunAt, err = o.optString("run_at"); err != nil {
		return r, err
	}
	if r.ExpireAfterSecs, err = o.optUint("expire_after_secs"); err != nil {
		return r, err
	}
	return r, nil
}

// ListRequest is QueueListRequest; absent params mean its defaults.
type ListRequest struct {
	Status []string // empty = every status
	Limit  *uint64  // nil = no limit (0.3.x)
	Offset uint64
}

// DecodeList reads queue/list params. An explicit "status": null is read
// as an empty filter (the reference rejects it; queue.md §3.4 recommends
// accepting it).
func DecodeList(raw json.RawMessage) (ListRequest, error) {
	var r ListRequest
	if raw == nil || isNull(raw) {
		return r, nil
	}
	o, err := parseObject(raw, "struct QueueListRequest")
	if err != nil {
		return r, err
	}
	if r.Status, _, err = o.optStrings("status"); err != nil {
		return r, err
	}
	if r.Limit, err = o.optUint("limit"); err != nil {
		return r, err
	}
	off, err := o.optUint("offset")
	if err != nil {
		return r, err
	}
	if off != nil {
		r.Offset = *off
	}
	return r, nil
}

// LeaseRequest is QueueLeaseRequest.
type LeaseRequest struct {
	Max uint64
	// WorkflowIDs is nil when the host sent none (the plugin mints ids).
	WorkflowIDs     []string
	ExcludeSubjects []string
}

// DecodeLease reads queue/lease params.
func DecodeLease(raw json.RawMessage) (LeaseRequest, error) {
	o, err := parseObject(raw, "struct QueueLeaseRequest")
	if err != nil {
		return LeaseRequest{}, err
	}
	var r LeaseRequest
	if r.Max, err = o.reqUint("max"); err != nil {
		return r, err
	}
	ids, present, err := o.optStrings("workflow_ids")
	if err != nil {
		return r, err
	}
	if present && ids == nil {
		ids = []string{}
	}
	r.WorkflowIDs = ids
	if r.ExcludeSubjects, _, err = o.optStrings("exclude_subjects"); err != nil {
		return r, err
	}
	return r, nil
}

// EntryRequest is the params of hold (with an optional reason), release
// and drop.
type EntryRequest struct {
	EntryID string
	Reason  *string
}

// DecodeEntry reads {entry_id, reason?}.
func DecodeEntry(raw json.RawMessage, what string) (EntryRequest, error) {
	o, err := parseObject(raw, "struct "+what)
	if err != nil {
		return EntryRequest{}, err
	}
	var r EntryRequest
	if r.EntryID, err = o.reqString("entry_id"); err != nil {
		return r, err
	}
	if r.Reason, err = o.optString("reason"); err != nil {
		return r, err
	}
	return r, nil
}

// DecodeReorder reads QueueReorderRequest's entry_ids.
func DecodeReorder(raw json.RawMessage) ([]string, error) {
	o, err := parseObject(raw, "struct QueueReorderRequest")
	if err != nil {
		return nil, err
	}
	return o.reqStrings("entry_ids")
}

// MarkAssignedRequest is QueueMarkAssignedRequest.
type MarkAssignedRequest struct {
	EntryID    string
	WorkflowID *string
}

// DecodeMarkAssigned reads queue/mark_assigned params.
func DecodeMarkAssigned(raw json.RawMessage) (MarkAssignedRequest, error) {
	o, err := parseObject(raw, "struct QueueMarkAssignedRequest")
	if err != nil {
		return MarkAssignedRequest{}, err
	}
	var r MarkAssignedRequest
	if r.EntryID, err = o.reqString("entry_id"); err != nil {
		return r, err
	}
	if r.WorkflowID, err = o.optString("workflow_id"); err != nil {
		return r, err
	}
	return r, nil
}

// CompletionRequest is QueueCompletionRequest. Status is validated by the
// caller, after decoding, as the references do.
type CompletionRequest struct {
	EntryID     string
	Status      string
	WorkflowRef *string
	WorkflowID  *string
}

// DecodeCompletion reads queue/completion params.
func DecodeCompletion(raw json.RawMessage) (CompletionRequest, error) {
	o, err := parseObject(raw, "struct QueueCompletionRequest")
	if err != nil {
		return CompletionRequest{}, err
	}
	var r CompletionRequest
	if r.EntryID, err = o.reqString("entry_id"); err != nil {
		return r, err
	}
	if r.Status, err = o.reqString("status"); err != nil {
		return r, err
	}
	if r.WorkflowRef, err = o.optString("workflow_ref"); err != nil {
		return r, err
	}
	if r.WorkflowID, err = o.optString("workflow_id"); err != nil {
		return r, err
	}
	return r, nil
}

// ReleasePendingRequest is QueueReleasePendingParams; both fields are
// required.
type ReleasePendingRequest struct {
	EntryID string
	Reason  string
}

// DecodeReleasePending reads queue/release_pending params.
func DecodeReleasePending(raw json.RawMessage) (ReleasePendingRequest, error) {
	o, err := parseObject(raw, "struct QueueReleasePendingParams")
	if err != nil {
		return ReleasePendingRequest{}, err
	}
	var r ReleasePendingRequest
	if r.EntryID, err = o.reqString("entry_id"); err != nil {
		return r, err
	}
	if r.Reason, err = o.reqString("reason"); err != nil {
		return r, err
	}
	return r, nil
}

type prefixedError struct {
	field string
	err   error
}

func (e *prefixedError) Error() string { return e.field + ": " + e.err.Error() }
func (e *prefixedError) Unwrap() error { return e.err }

func prefix(field string, err error) error { return &prefixedError{field, err} }
