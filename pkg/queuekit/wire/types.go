package wire

import "encoding/json"

// Result types. Go encodes struct fields in declaration order, so each is
// declared in the alphabetical key order the references emit (queue.md
// §1.6); "always present" fields carry no omitempty.

// Entry is QueueEntry (from queue/list and queue/lease).
type Entry struct {
	AssignedAt      *string         `json:"assigned_at,omitempty"`
	EnqueuedAt      string          `json:"enqueued_at"`
	EntryID         string          `json:"entry_id"`
	ExpireAfterSecs json.Number     `json:"expire_after_secs,omitempty"` // u64, echoed losslessly
	HeldAt          *string         `json:"held_at,omitempty"`
	RunAt           *string         `json:"run_at,omitempty"` // verbatim
	Status          string          `json:"status"`
	SubjectDispatch json.RawMessage `json:"subject_dispatch"`
	SubjectID       string          `json:"subject_id"`
	TaskID          *string         `json:"task_id,omitempty"`
	WorkflowID      *string         `json:"workflow_id,omitempty"`
}

// Stats is QueueStats; every count is always present.
type Stats struct {
	Assigned uint64 `json:"assigned"`
	Deferred uint64 `json:"deferred"`
	Held     uint64 `json:"held"`
	Pending  uint64 `json:"pending"`
	Total    uint64 `json:"total"`
}

// EnqueueResponse is QueueEnqueueResponse.
type EnqueueResponse struct {
	Enqueued  bool   `json:"enqueued"`
	EntryID   string `json:"entry_id"`
	SubjectID string `json:"subject_id"`
	Warning   string `json:"warning,omitempty"`
}

// ListResponse is QueueListResponse.
type ListResponse struct {
	Entries []Entry `json:"entries"`
	Stats   Stats   `json:"stats"`
	Total   uint64  `json:"total"`
}

// LeaseResponse is QueueLeaseResponse.
type LeaseResponse struct {
	Leased []Entry `json:"leased"`
}

// NextDeadlineResponse is QueueNextDeadlineResponse: {} when nothing is
// deferred.
type NextDeadlineResponse struct {
	NextRunAt *string `json:"next_run_at,omitempty"`
}

// MutationResponse is QueueMutationResponse; not_found is always present.
type MutationResponse struct {
	Changed  bool `json:"changed"`
	NotFound bool `json:"not_found"`
}

// ReorderResponse is QueueReorderResponse.
type ReorderResponse struct {
	ReorderedCount uint64 `json:"reordered_count"`
}

// ReleasePendingResponse is QueueReleasePendingResponse.
type ReleasePendingResponse struct {
	EntryID string `json:"entry_id"`
	Status  string `json:"status"`
}

// Entry statuses and completion statuses (queue.md §3.2).
const (
	StatusPending  = "pending"
	StatusAssigned = "assigned"
	StatusHeld     = "held"

	CompletionCompleted = "completed"
	CompletionFailed    = "failed"
	CompletionCancelled = "cancelled"
)
