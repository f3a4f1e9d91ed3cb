package wire

import (
	"strings"
	"testing"
)

// serde's deny_unknown_fields wording for one, two and more fields.
func TestStrictObject(t *testing.T) {
	tests := []struct {
		raw    string
		fields []string
		want   string
	}{
		{`{"a":1,"z":2}`, []string{"a"}, "unknown field `z`, expected `a`"},
		{`{"z":2}`, []string{"a", "b"}, "unknown field `z`, expected `a` or `b`"},
		{`{"y":1,"x":2}`, []string{"a", "b", "c"}, "unknown field `x`, expected one of `a`, `b`, `c`"},
		{`[]`, []string{"a"}, "invalid type: array, expected struct T"},
		{`{"a":1}`, []string{"a", "b"}, ""},
	}
	for _, tt := range tests {
		_, err := strictObject([]byte(tt.raw), "T", tt.fields...)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.raw, err, tt.want)
		}
	}
}

// Fence validation messages (queue-v2.md §2.5).
func TestFenceValidation(t *testing.T) {
	good := func() *ExecutionFence {
		return &ExecutionFence{Schema: FenceSchema, Version: 1, WorkflowID: "w", WorkflowGeneration: 1,
			Subject:    &SubjectGeneration{QualifiedID: "task:T", Generation: 1},
			QueueLease: &QueueLeaseFence{EntryID: "e", OwnerID: "o", Generation: 1, ExpiresAt: "2026-01-01T00:00:00Z"},
			Repository: &RepositoryReservation{Repository: "r", BaseRef: "refs/heads/main", HeadRef: "refs/heads/x"}}
	}
	tests := []struct {
		change func(*ExecutionFence)
		want   string
	}{
		{func(*ExecutionFence) {}, ""},
		{func(f *ExecutionFence) { f.Schema = "x" }, "unsupported execution fence schema 'x'; expected 'animus.execution-fence.v1'"},
		{func(f *ExecutionFence) { f.Version = 2 }, "unsupported execution fence version 2; expected 1"},
		{func(f *ExecutionFence) { f.WorkflowID = " " }, "workflow_id must not be empty"},
		{func(f *ExecutionFence) { f.WorkflowGeneration = 0 }, "workflow_generation must be greater than zero"},
		{func(f *ExecutionFence) { f.Subject.QualifiedID = "T" }, "subject qualified_id must use <kind>:<native-id> form"},
		{func(f *ExecutionFence) { f.QueueLease.OwnerID = "" }, "queue_lease.owner_id must not be empty"},
		{func(f *ExecutionFence) { f.Repository.HeadRef = "refs/heads/x/" }, "head_ref must be a safe fully-qualified git ref"},
		{func(f *ExecutionFence) { f.Repository.BaseRef = "refs/../x" }, "base_ref must be a safe fully-qualified git ref"},
		{func(f *ExecutionFence) { f.QueueLease = nil }, "queue-backed execution fence requires queue_lease"},
	}
	for _, tt := range tests {
		f := good()
		tt.change(f)
		err := f.ValidateQueueBacked()
		if (tt.want == "") != (err == nil) || (err != nil && err.Error() != tt.want) {
			t.Errorf("%v, want %q", err, tt.want)
		}
	}
}
