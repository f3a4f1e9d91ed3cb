package queuev2

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
)

// What the 0.7 daemon accepts of a queue's answers (§4.2–§4.4).

// AcceptLeased is the dispatch tick's check of one leased item before it
// reserves local resources (§4.2): FencedQueueEntry::validate, a subject
// in the fence, the owner the daemon sent, and an entry that is assigned.
// An item that fails it is left assigned: the daemon strands it.
func AcceptLeased(fe FencedQueueEntry, owner string) error {
	x, e := fe.Execution, fe.Entry
	if err := checkTicket(x); err != nil {
		return fmt.Errorf("entry %s: %w", e.EntryID, err)
	}
	wf := deref(e.WorkflowID)
	switch {
	case x.QueueLease.EntryID != e.EntryID:
		return fmt.Errorf("queue_lease.entry_id %s ≠ entry_id %s", x.QueueLease.EntryID, e.EntryID)
	case wf != x.WorkflowID:
		return fmt.Errorf("entry.workflow_id %q ≠ execution.workflow_id %q", wf, x.WorkflowID)
	case e.SubjectID != x.Subject.QualifiedID && !strings.HasSuffix(x.Subject.QualifiedID, ":"+e.SubjectID):
		return fmt.Errorf("entry.subject_id %q does not match %q", e.SubjectID, x.Subject.QualifiedID)
	case x.QueueLease.OwnerID != owner:
		return fmt.Errorf("queue_lease.owner_id %q, the daemon sent %q", x.QueueLease.OwnerID, owner)
	case e.Status != "assigned" || e.AssignedAt == nil:
		return fmt.Errorf("leased entry has status %q, assigned_at %v", e.Status, deref(e.AssignedAt))
	}
	return nil
}

// CheckWorkflowID: a leased item's workflow id is one the daemon minted
// for this call (sent), or, for an entry put back earlier, the one it had
// then (kept, "" for none).
func CheckWorkflowID(fe FencedQueueEntry, sent []string, kept string) error {
	wf := fe.Execution.WorkflowID
	switch {
	case kept == "" && !slices.Contains(sent, wf):
		return fmt.Errorf("workflow id %q was not sent (%v)", wf, sent)
	case kept != "" && wf != kept:
		return fmt.Errorf("workflow id %q, the entry had %q before put-back", wf, kept)
	}
	return nil
}

// AcceptRenew is the daemon's acceptance of a renew answer (§4.3):
// applied or already_applied with an execution that passes CheckRenew.
// It returns the fence to store.
func AcceptRenew(m MutationResponse, before ExecutionFence) (ExecutionFence, error) {
	after, err := accepted(m, "renewal")
	if err != nil {
		return after, err
	}
	return after, CheckRenew(before, after)
}

// AcceptRecover is the daemon's acceptance of a recover answer (§4.4):
// applied or already_applied with an execution that passes CheckRecover.
func AcceptRecover(m MutationResponse, before ExecutionFence, newOwner string) (ExecutionFence, error) {
	after, err := accepted(m, "recovery")
	if err != nil {
		return after, err
	}
	return after, CheckRecover(before, after, newOwner)
}

func accepted(m MutationResponse, what string) (ExecutionFence, error) {
	if m.Outcome != "applied" && m.Outcome != "already_applied" {
		return ExecutionFence{}, fmt.Errorf("queue lease %s rejected with %s: %s", what, m.Outcome, m.ReasonText())
	}
	if m.Execution == nil {
		return ExecutionFence{}, fmt.Errorf("queue lease %s %s without execution", what, m.Outcome)
	}
	return *m.Execution, nil
}

// CheckRenew is the renewal rule (§4.3): a valid ticket, the same
// identity, the same owner and lease generation, and an expiry never
// earlier than before ("renew shortened lease expiry" is fatal).
func CheckRenew(before, after ExecutionFence) error {
	if err := transition(before, after); err != nil {
		return err
	}
	b, a := before.QueueLease, after.QueueLease
	if a.OwnerID != b.OwnerID || a.Generation != b.Generation {
		return fmt.Errorf("renew moved owner or generation: %s → %s", before, after)
	}
	if after.Expiry().Before(before.Expiry()) {
		return fmt.Errorf("renew shortened lease expiry: %s → %s", b.ExpiresAt, a.ExpiresAt)
	}
	return nil
}

// CheckRecover is the recovery rule (§4.4): a valid ticket, the same
// identity, the new owner and a lease generation exactly one more.
func CheckRecover(before, after ExecutionFence, newOwner string) error {
	if err := transition(before, after); err != nil {
		return err
	}
	if after.QueueLease.OwnerID != newOwner || after.QueueLease.Generation != before.QueueLease.Generation+1 {
		return fmt.Errorf("recover: want owner %s and lease generation %d, got %s", newOwner, before.QueueLease.Generation+1, after)
	}
	return nil
}

func transition(before, after ExecutionFence) error {
	if err := checkTicket(after); err != nil {
		return fmt.Errorf("%s: %w", after, err)
	}
	return SameIdentity(before, after)
}

// NewUUID is a UUID v4, what the daemon mints for owner and workflow ids.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
