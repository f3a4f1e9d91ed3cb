package conformance

import (
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// The queue-v2 suite's verdicts rest on the checks below (the daemon's
// fence rules and the schema check of every v2 result); they are pinned
// here without a plugin, so a lenient check cannot hide behind a passing
// plugin.

func goodFence() execFence {
	return execFence{Schema: fenceSchemaID, Version: 1, WorkflowID: "wf-1", WorkflowGeneration: 1,
		Subject:    &subjectGen{"task:TASK-1", 1},
		QueueLease: &leaseFence{EntryID: "e-1", OwnerID: "daemon-a", Generation: 1, ExpiresAt: "2026-10-01T12:30:00.123456789Z"},
		Repository: &repoReservation{"acme/app", "refs/heads/main", "refs/heads/animus/TASK-1"}}
}

func TestFenceValidate(t *testing.T) {
	for _, c := range []struct {
		name        string
		edit        func(*execFence)
		queue, code bool
		wantErr     string
	}{
		{"coding fence", func(*execFence) {}, true, true, ""},
		{"wrong schema", func(f *execFence) { f.Schema = "x" }, false, false, "schema"},
		{"version 2", func(f *execFence) { f.Version = 2 }, false, false, "version"},
		{"blank workflow id", func(f *execFence) { f.WorkflowID = " " }, false, false, "workflow_id"},
		{"workflow generation 0", func(f *execFence) { f.WorkflowGeneration = 0 }, false, false, "workflow_generation"},
		{"bare subject id", func(f *execFence) { f.Subject.QualifiedID = "TASK-1" }, false, false, "<kind>:<native-id>"},
		{"subject id task:", func(f *execFence) { f.Subject.QualifiedID = "task:" }, false, false, "<kind>:<native-id>"},
		{"lease generation 0", func(f *execFence) { f.QueueLease.Generation = 0 }, false, false, "queue_lease"},
		{"expiry not RFC 3339", func(f *execFence) { f.QueueLease.ExpiresAt = "soon" }, false, false, "expires_at"},
		{"head ref main", func(f *execFence) { f.Repository.HeadRef = "main" }, false, false, "repository"},
		{"same refs", func(f *execFence) { f.Repository.HeadRef = f.Repository.BaseRef }, false, false, "repository"},
		{"no lease, basic", func(f *execFence) { f.QueueLease = nil }, false, false, ""},
		{"no lease, queue-backed", func(f *execFence) { f.QueueLease = nil }, true, false, "requires queue_lease"},
		{"no repository, coding", func(f *execFence) { f.Repository = nil }, true, true, "coding"},
	} {
		f := goodFence()
		c.edit(&f)
		err := f.validate(c.queue, c.code)
		if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.wantErr)
		}
	}
}

func TestFenceTransitions(t *testing.T) {
	before := goodFence()
	later := before.clone()
	later.QueueLease.ExpiresAt = "2026-10-01T13:00:00Z"
	earlier := before.clone()
	earlier.QueueLease.ExpiresAt = "2026-10-01T12:30:00Z"
	moved := later.clone()
	moved.Repository.HeadRef = "refs/heads/other"
	if err := checkRenewTransition(before, later); err != nil {
		t.Errorf("later expiry: %v", err)
	}
	if err := checkRenewTransition(before, before); err != nil {
		t.Errorf("same expiry: %v", err)
	}
	if err := checkRenewTransition(before, earlier); err == nil || !strings.Contains(err.Error(), "shortened") {
		t.Errorf("earlier expiry (by 123456789 ns): %v", err)
	}
	if err := checkRenewTransition(before, moved); err == nil {
		t.Error("renew that moved the head ref was accepted")
	}
	rec := later.clone()
	rec.QueueLease.OwnerID, rec.QueueLease.Generation = "daemon-b", 2
	if err := checkRecoverTransition(before, rec, "daemon-b"); err != nil {
		t.Errorf("recover: %v", err)
	}
	if err := checkRenewTransition(before, rec); err == nil {
		t.Error("a renew that changed owner and generation was accepted")
	}
	rec.QueueLease.Generation = 3
	if err := checkRecoverTransition(before, rec, "daemon-b"); err == nil {
		t.Error("recover by +2 was accepted")
	}
}

func TestFencedEntryValidate(t *testing.T) {
	wf := "wf-1"
	at := "2026-10-01T12:00:05.1+00:00"
	entry := func(subjectID string) fencedEntry {
		return fencedEntry{Entry: queueEntryV2{queueEntry: queueEntry{EntryID: "e-1", SubjectID: subjectID, Status: "assigned",
			WorkflowID: &wf, AssignedAt: &at}}, Execution: goodFence()}
	}
	for subjectID, ok := range map[string]bool{"task:TASK-1": true, "TASK-1": true, "linear.issue::TASK-1": false, "TASK-2": false} {
		if err := entry(subjectID).validate("daemon-a"); (err == nil) != ok {
			t.Errorf("subject_id %q: %v, want ok=%v", subjectID, err, ok)
		}
	}
	if err := entry("task:TASK-1").validate("daemon-b"); err == nil {
		t.Error("a hand-out to another owner was accepted")
	}
	fe := entry("task:TASK-1")
	fe.Execution.Subject = nil
	if err := fe.validate("daemon-a"); err == nil {
		t.Error("a fence without subject was accepted")
	}
}

func TestValidateQueueResult(t *testing.T) {
	set, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	fence := goodFence().String()
	entry := `{"entry_id":"e-1","subject_id":"task:TASK-1","status":"assigned","enqueued_at":"x","workflow_id":"wf-1",` +
		`"subject_dispatch":{"requested_at":"2026-10-01T12:00:00Z","subject":{"Task":{"id":"TASK-1"}},"trigger_source":"t","workflow_ref":"standard"}}`
	for _, c := range []struct {
		method, result string
		ok             bool
	}{
		{"queue/v2/lease/renew", `{"outcome":"applied","execution":` + fence + `}`, true},
		{"queue/v2/lease/renew", `{"outcome":"applied","execution":` + fence + `,"extra":1}`, false},
		{"queue/v2/completion", `{"outcome":"done"}`, false},
		{"queue/v2/enqueue", `{"enqueued":true,"entry_id":"e-1","subject":{"qualified_id":"task:TASK-1","generation":1}}`, true},
		{"queue/v2/enqueue", `{"enqueued":true,"entry_id":"e-1","subject":{"qualified_id":"task:TASK-1","generation":1,"x":0}}`, false},
		{"queue/v2/lease", `{"leased":[{"entry":` + entry + `,"execution":` + fence + `}]}`, true},
		{"queue/v2/lease", `{"leased":[],"blocked":[{"entry_id":"e-2","reason":"busy"}]}`, false},
	} {
		err := validateQueueResult(set, c.method, []byte(c.result))
		if (err == nil) != c.ok {
			t.Errorf("%s %s: %v, want ok=%v", c.method, c.result, err, c.ok)
		}
	}
}
