package queuev2

import (
	"strings"
	"testing"
)

// The verdicts of the queue-v2 conformance suite and of the scripted 0.7
// daemon tests rest on these checks; they are pinned here without a
// plugin, so a lenient check cannot hide behind a passing plugin.

func goodFence() ExecutionFence {
	return ExecutionFence{Schema: FenceSchema, Version: 1, WorkflowID: "wf-1", WorkflowGeneration: 1,
		Subject:    &SubjectGeneration{"task:TASK-1", 1},
		QueueLease: &QueueLeaseFence{EntryID: "e-1", OwnerID: "daemon-a", Generation: 1, ExpiresAt: "2026-10-01T12:30:00.123456789Z"},
		Repository: &RepositoryReservation{"acme/app", "refs/heads/main", "refs/heads/animus/TASK-1"}}
}

func TestFenceValidate(t *testing.T) {
	for _, c := range []struct {
		name    string
		edit    func(*ExecutionFence)
		level   Level
		wantErr string
	}{
		{"coding fence", func(*ExecutionFence) {}, Coding, ""},
		{"wrong schema", func(f *ExecutionFence) { f.Schema = "x" }, Basic, "schema"},
		{"version 2", func(f *ExecutionFence) { f.Version = 2 }, Basic, "version"},
		{"blank workflow id", func(f *ExecutionFence) { f.WorkflowID = " " }, Basic, "workflow_id"},
		{"workflow generation 0", func(f *ExecutionFence) { f.WorkflowGeneration = 0 }, Basic, "workflow_generation"},
		{"bare subject id", func(f *ExecutionFence) { f.Subject.QualifiedID = "TASK-1" }, Basic, "<kind>:<native-id>"},
		{"subject id task:", func(f *ExecutionFence) { f.Subject.QualifiedID = "task:" }, Basic, "<kind>:<native-id>"},
		{"subject generation 0", func(f *ExecutionFence) { f.Subject.Generation = 0 }, Basic, "subject generation"},
		{"lease generation 0", func(f *ExecutionFence) { f.QueueLease.Generation = 0 }, Basic, "queue_lease"},
		{"blank owner", func(f *ExecutionFence) { f.QueueLease.OwnerID = " " }, Basic, "queue_lease"},
		{"expiry not RFC 3339", func(f *ExecutionFence) { f.QueueLease.ExpiresAt = "soon" }, Basic, "expires_at"},
		{"expiry missing", func(f *ExecutionFence) { f.QueueLease.ExpiresAt = "" }, Basic, "expires_at"},
		{"expiry the zero time", func(f *ExecutionFence) { f.QueueLease.ExpiresAt = "0001-01-01T00:00:00Z" }, Basic, "expires_at"},
		{"expiry with an offset", func(f *ExecutionFence) { f.QueueLease.ExpiresAt = "2026-10-01T14:30:00+02:00" }, Coding, ""},
		{"head ref main", func(f *ExecutionFence) { f.Repository.HeadRef = "main" }, Basic, "repository"},
		{"same refs", func(f *ExecutionFence) { f.Repository.HeadRef = f.Repository.BaseRef }, Basic, "repository"},
		{"no lease, basic", func(f *ExecutionFence) { f.QueueLease = nil }, Basic, ""},
		{"no lease, queue-backed", func(f *ExecutionFence) { f.QueueLease = nil }, QueueBacked, "requires queue_lease"},
		{"no repository, coding", func(f *ExecutionFence) { f.Repository = nil }, Coding, "coding"},
	} {
		f := goodFence()
		c.edit(&f)
		err := f.Validate(c.level)
		if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.wantErr)
		}
	}
}

func TestFenceTransitions(t *testing.T) {
	before := goodFence()
	later := before.Clone()
	later.QueueLease.ExpiresAt = "2026-10-01T13:00:00Z"
	earlier := before.Clone()
	earlier.QueueLease.ExpiresAt = "2026-10-01T12:30:00Z"
	moved := later.Clone()
	moved.Repository.HeadRef = "refs/heads/other"
	if err := CheckRenew(before, later); err != nil {
		t.Errorf("later expiry: %v", err)
	}
	if err := CheckRenew(before, before); err != nil {
		t.Errorf("same expiry: %v", err)
	}
	if err := CheckRenew(before, earlier); err == nil || !strings.Contains(err.Error(), "shortened") {
		t.Errorf("earlier expiry (by 123456789 ns): %v", err)
	}
	if err := CheckRenew(before, moved); err == nil {
		t.Error("renew that moved the head ref was accepted")
	}
	noSubject := later.Clone()
	noSubject.Subject = nil
	noSubject.Repository = nil
	if err := CheckRenew(before, noSubject); err == nil {
		t.Error("renew answered with a fence without subject was accepted")
	}
	invalid := later.Clone()
	invalid.Version = 2
	if err := CheckRenew(before, invalid); err == nil {
		t.Error("renew answered with an invalid fence was accepted")
	}
	rec := later.Clone()
	rec.QueueLease.OwnerID, rec.QueueLease.Generation = "daemon-b", 2
	if err := CheckRecover(before, rec, "daemon-b"); err != nil {
		t.Errorf("recover: %v", err)
	}
	if err := CheckRenew(before, rec); err == nil {
		t.Error("a renew that changed owner and generation was accepted")
	}
	if err := CheckRecover(before, rec, "daemon-c"); err == nil {
		t.Error("recover to another owner than asked was accepted")
	}
	rec.QueueLease.Generation = 3
	if err := CheckRecover(before, rec, "daemon-b"); err == nil {
		t.Error("recover by +2 was accepted")
	}
}

func TestAcceptMutation(t *testing.T) {
	before := goodFence()
	later := before.Clone()
	later.QueueLease.ExpiresAt = "2026-10-01T13:00:00Z"
	reason := "queue lease has expired and requires recovery"
	for _, c := range []struct {
		name string
		m    MutationResponse
		ok   bool
	}{
		{"applied", MutationResponse{Outcome: "applied", Execution: &later}, true},
		{"already_applied", MutationResponse{Outcome: "already_applied", Execution: &later}, true},
		{"applied without execution", MutationResponse{Outcome: "applied"}, false},
		{"stale_fence", MutationResponse{Outcome: "stale_fence", Reason: &reason}, false},
		{"lease_still_live", MutationResponse{Outcome: "lease_still_live", Execution: &later}, false},
	} {
		got, err := AcceptRenew(c.m, before)
		if (err == nil) != c.ok || (c.ok && got.String() != later.String()) {
			t.Errorf("renew %s: %v %s, want ok=%v", c.name, err, got, c.ok)
		}
	}
	rec := later.Clone()
	rec.QueueLease.OwnerID, rec.QueueLease.Generation = "daemon-b", 2
	if _, err := AcceptRecover(MutationResponse{Outcome: "applied", Execution: &rec}, before, "daemon-b"); err != nil {
		t.Errorf("recover: %v", err)
	}
	if _, err := AcceptRecover(MutationResponse{Outcome: "lease_still_live", Execution: &before}, before, "daemon-b"); err == nil {
		t.Error("lease_still_live was accepted as a recovery")
	}
}

func TestAcceptLeased(t *testing.T) {
	wf := "wf-1"
	at := "2026-10-01T12:00:05.1+00:00"
	entry := func(subjectID string) FencedQueueEntry {
		return FencedQueueEntry{Entry: QueueEntry{EntryID: "e-1", SubjectID: subjectID, Status: "assigned",
			WorkflowID: &wf, AssignedAt: &at}, Execution: goodFence()}
	}
	for subjectID, ok := range map[string]bool{"task:TASK-1": true, "TASK-1": true, "linear.issue::TASK-1": false, "TASK-2": false} {
		if err := AcceptLeased(entry(subjectID), "daemon-a"); (err == nil) != ok {
			t.Errorf("subject_id %q: %v, want ok=%v", subjectID, err, ok)
		}
	}
	for name, edit := range map[string]func(*FencedQueueEntry){
		"another owner":      func(*FencedQueueEntry) {},
		"no subject":         func(fe *FencedQueueEntry) { fe.Execution.Subject = nil },
		"no queue lease":     func(fe *FencedQueueEntry) { fe.Execution.QueueLease = nil },
		"another entry id":   func(fe *FencedQueueEntry) { fe.Execution.QueueLease.EntryID = "e-2" },
		"no workflow id":     func(fe *FencedQueueEntry) { fe.Entry.WorkflowID = nil },
		"pending":            func(fe *FencedQueueEntry) { fe.Entry.Status = "pending" },
		"no assigned_at":     func(fe *FencedQueueEntry) { fe.Entry.AssignedAt = nil },
		"invalid repository": func(fe *FencedQueueEntry) { fe.Execution.Repository.BaseRef = "main" },
	} {
		fe := entry("task:TASK-1")
		edit(&fe)
		owner := "daemon-a"
		if name == "another owner" {
			owner = "daemon-b"
		}
		if err := AcceptLeased(fe, owner); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	fe := entry("task:TASK-1")
	if err := CheckWorkflowID(fe, []string{"wf-0", "wf-1"}, ""); err != nil {
		t.Errorf("a workflow id sent: %v", err)
	}
	if err := CheckWorkflowID(fe, []string{"wf-2"}, ""); err == nil {
		t.Error("a workflow id not sent was accepted")
	}
	if err := CheckWorkflowID(fe, []string{"wf-1"}, "wf-0"); err == nil {
		t.Error("a put-back entry's new workflow id was accepted")
	}
	if err := CheckWorkflowID(fe, nil, "wf-1"); err != nil {
		t.Errorf("a put-back entry's kept workflow id: %v", err)
	}
}

// TestDecodeStrict: unknown keys fail anywhere in the strict types, and
// are ignored inside the lenient QueueEntry and its subject_dispatch.
func TestDecodeStrict(t *testing.T) {
	fence := goodFence().String()
	entry := `{"entry_id":"e-1","subject_id":"task:TASK-1","status":"assigned","enqueued_at":"x","workflow_id":"wf-1","surprise_entry":1,` +
		`"subject_dispatch":{"requested_at":"2026-10-01T12:00:00Z","subject":{"Task":{"id":"TASK-1"}},"workflow_ref":"standard","surprise":2}}`
	var l LeaseResponse
	if err := DecodeStrict([]byte(`{"leased":[{"entry":`+entry+`,"execution":`+fence+`}]}`), &l); err != nil {
		t.Fatalf("lenient entry inside a strict lease: %v", err)
	}
	if len(l.Leased) != 1 || l.Leased[0].Entry.EntryID != "e-1" || l.Leased[0].Entry.WorkflowRef() != "standard" ||
		l.Leased[0].Execution.String() != fence {
		t.Errorf("decoded %+v", l)
	}
	for _, c := range []struct {
		raw string
		v   any
	}{
		{`{"leased":[],"surprise":1}`, &LeaseResponse{}},
		{`{"leased":[{"entry":` + entry + `,"execution":` + fence + `,"x":1}]}`, &LeaseResponse{}},
		{`{"leased":[{"entry":` + entry + `,"execution":` + strings.Replace(fence, `"version":1`, `"version":1,"x":1`, 1) + `}]}`, &LeaseResponse{}},
		{`{"leased":[],"blocked":[{"entry_id":"e","reason":"r","x":1}]}`, &LeaseResponse{}},
		{`{"outcome":"applied","execution":` + strings.Replace(fence, `"owner_id":"daemon-a"`, `"owner_id":"daemon-a","x":1`, 1) + `}`, &MutationResponse{}},
		{`{"outcome":"applied","extra":1}`, &MutationResponse{}},
		{`{"enqueued":true,"entry_id":"e-1","subject":{"qualified_id":"task:TASK-1","generation":1,"x":0}}`, &EnqueueResponse{}},
		{`{"enqueued":true,"entry_id":"e-1","subject":{"qualified_id":"task:TASK-1","generation":-1}}`, &EnqueueResponse{}},
	} {
		if err := DecodeStrict([]byte(c.raw), c.v); err == nil {
			t.Errorf("%s decoded strictly", c.raw)
		}
	}
	var m MutationResponse
	if err := DecodeStrict([]byte(`{"outcome":"stale_fence","reason":"r"}`), &m); err != nil || m.ReasonText() != "r" || m.Execution != nil {
		t.Errorf("mutation: %v %s", err, m)
	}
}

func TestNewUUID(t *testing.T) {
	a, b := NewUUID(), NewUUID()
	if a == b || len(a) != 36 || a[14] != '4' || !strings.ContainsRune("89ab", rune(a[19])) {
		t.Errorf("NewUUID: %s, %s", a, b)
	}
}
