package queuev2

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The v2 responses (§2.7–§2.10). The daemon decodes them strictly
// (DecodeStrict); only the embedded QueueEntry, with its subject_dispatch,
// is lenient.

// QueueEntry is the 0.3.2 QueueEntry as list and lease return it
// (lenient: unknown keys are ignored even inside a strict decode).
type QueueEntry struct {
	EntryID         string          `json:"entry_id"`
	SubjectID       string          `json:"subject_id"`
	TaskID          *string         `json:"task_id,omitempty"`
	SubjectDispatch json.RawMessage `json:"subject_dispatch,omitempty"`
	Status          string          `json:"status"`
	WorkflowID      *string         `json:"workflow_id,omitempty"`
	EnqueuedAt      string          `json:"enqueued_at"`
	AssignedAt      *string         `json:"assigned_at,omitempty"`
	HeldAt          *string         `json:"held_at,omitempty"`
	RunAt           *string         `json:"run_at,omitempty"`
	ExpireAfterSecs *uint64         `json:"expire_after_secs,omitempty"`
}

// UnmarshalJSON decodes leniently whatever decoder calls it: the
// DisallowUnknownFields of DecodeStrict does not reach a type's own
// UnmarshalJSON.
func (e *QueueEntry) UnmarshalJSON(b []byte) error {
	type lenient QueueEntry
	return json.Unmarshal(b, (*lenient)(e))
}

// WorkflowRef is subject_dispatch.workflow_ref ("" when absent).
func (e QueueEntry) WorkflowRef() string {
	var d struct {
		WorkflowRef string `json:"workflow_ref"`
	}
	_ = json.Unmarshal(e.SubjectDispatch, &d)
	return d.WorkflowRef
}

// FencedQueueEntry is one hand-out of a v2 lease.
type FencedQueueEntry struct {
	Entry     QueueEntry     `json:"entry"`
	Execution ExecutionFence `json:"execution"`
}

// LeaseBlock is QueueLeaseBlock.
type LeaseBlock struct {
	EntryID       string          `json:"entry_id"`
	Reason        string          `json:"reason"`
	ConflictsWith *ExecutionFence `json:"conflicts_with,omitempty"`
}

func (b LeaseBlock) String() string { return jsonText(b) }

// LeaseResponse is QueueLeaseV2Response.
type LeaseResponse struct {
	Leased  []FencedQueueEntry `json:"leased"`
	Blocked []LeaseBlock       `json:"blocked,omitempty"`
}

// MutationResponse is QueueLeaseMutationResponse, the answer of renew,
// recover, completion and release_pending.
type MutationResponse struct {
	Outcome   string          `json:"outcome"`
	Execution *ExecutionFence `json:"execution,omitempty"`
	Reason    *string         `json:"reason,omitempty"`
}

// ReasonText is the reason, "" when absent.
func (m MutationResponse) ReasonText() string { return deref(m.Reason) }

func (m MutationResponse) String() string { return jsonText(m) }

// EnqueueResponse is QueueEnqueueV2Response.
type EnqueueResponse struct {
	Enqueued bool              `json:"enqueued"`
	EntryID  string            `json:"entry_id"`
	Subject  SubjectGeneration `json:"subject"`
	Warning  *string           `json:"warning,omitempty"`
}

// WarningText is the warning, "" when absent.
func (r EnqueueResponse) WarningText() string { return deref(r.Warning) }

func (r EnqueueResponse) String() string { return jsonText(r) }

// DecodeStrict decodes like serde with deny_unknown_fields: an unknown key
// anywhere in the strict types is a hard error for the daemon's call.
func DecodeStrict(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%s does not decode strictly: %w", raw, err)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
