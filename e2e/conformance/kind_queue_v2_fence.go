package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// The execution fence as the 0.7 daemon holds it (animus-execution-protocol
// 0.1.0, queue-v2.md §2.2–§2.5), and the checks the daemon applies to every
// fence a queue returns: FencedQueueEntry::validate on a lease, and the
// renew/recover transition rules of §4.3/§4.4.

const fenceSchemaID = "animus.execution-fence.v1"

type subjectGen struct {
	QualifiedID string `json:"qualified_id"`
	Generation  uint64 `json:"generation"`
}

type leaseFence struct {
	EntryID    string `json:"entry_id"`
	OwnerID    string `json:"owner_id"`
	Generation uint64 `json:"generation"`
	ExpiresAt  string `json:"expires_at"`
}

type repoReservation struct {
	Repository string `json:"repository"`
	BaseRef    string `json:"base_ref"`
	HeadRef    string `json:"head_ref"`
}

type execFence struct {
	Schema             string           `json:"schema"`
	Version            uint32           `json:"version"`
	WorkflowID         string           `json:"workflow_id"`
	WorkflowGeneration uint64           `json:"workflow_generation"`
	Subject            *subjectGen      `json:"subject,omitempty"`
	QueueLease         *leaseFence      `json:"queue_lease,omitempty"`
	Repository         *repoReservation `json:"repository,omitempty"`
}

// clone returns a deep copy a scenario may edit into a forged fence.
func (f execFence) clone() execFence {
	b, _ := json.Marshal(f)
	var out execFence
	_ = json.Unmarshal(b, &out)
	return out
}

func (f execFence) expiry() time.Time {
	if f.QueueLease == nil {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, f.QueueLease.ExpiresAt)
	return t
}

func (f execFence) String() string {
	b, _ := json.Marshal(f)
	return string(b)
}

// validate is the crate's validation at the level the daemon asks for:
// basic, queue-backed (+ queue_lease) or coding (+ subject, repository).
func (f execFence) validate(queueBacked, coding bool) error {
	switch {
	case f.Schema != fenceSchemaID:
		return fmt.Errorf("unsupported execution fence schema %q", f.Schema)
	case f.Version != 1:
		return fmt.Errorf("unsupported execution fence version %d", f.Version)
	case strings.TrimSpace(f.WorkflowID) == "":
		return fmt.Errorf("workflow_id must not be empty")
	case f.WorkflowGeneration == 0:
		return fmt.Errorf("workflow_generation must be greater than zero")
	}
	if s := f.Subject; s != nil {
		kind, id, ok := strings.Cut(s.QualifiedID, ":")
		if !ok || strings.TrimSpace(kind) == "" || strings.TrimSpace(id) == "" {
			return fmt.Errorf("subject qualified_id %q must use <kind>:<native-id> form", s.QualifiedID)
		}
		if s.Generation == 0 {
			return fmt.Errorf("subject generation must be greater than zero")
		}
	}
	if l := f.QueueLease; l != nil {
		if strings.TrimSpace(l.EntryID) == "" || strings.TrimSpace(l.OwnerID) == "" || l.Generation == 0 {
			return fmt.Errorf("queue_lease %+v: entry_id, owner_id and generation must be set", *l)
		}
		if _, err := time.Parse(time.RFC3339Nano, l.ExpiresAt); err != nil {
			return fmt.Errorf("queue_lease.expires_at %q is not RFC 3339", l.ExpiresAt)
		}
	}
	if r := f.Repository; r != nil {
		if strings.TrimSpace(r.Repository) == "" || !safeRef(r.BaseRef) || !safeRef(r.HeadRef) || r.BaseRef == r.HeadRef {
			return fmt.Errorf("repository reservation %+v is invalid", *r)
		}
	}
	if (queueBacked || coding) && f.QueueLease == nil {
		return fmt.Errorf("queue-backed execution fence requires queue_lease")
	}
	if coding && (f.Subject == nil || f.Repository == nil) {
		return fmt.Errorf("coding execution fence requires subject and repository")
	}
	return nil
}

func safeRef(ref string) bool {
	return strings.HasPrefix(ref, "refs/") && !strings.Contains(ref, "..") && !strings.HasSuffix(ref, "/")
}

// sameIdentity: entry id, workflow id and generation, subject and
// repository unchanged (what a renew or recover may never move).
func sameIdentity(a, b execFence) error {
	switch {
	case a.QueueLease == nil || b.QueueLease == nil || a.QueueLease.EntryID != b.QueueLease.EntryID:
		return fmt.Errorf("entry id changed: %s → %s", a, b)
	case a.WorkflowID != b.WorkflowID || a.WorkflowGeneration != b.WorkflowGeneration:
		return fmt.Errorf("workflow identity changed: %s → %s", a, b)
	case !reflect.DeepEqual(a.Subject, b.Subject):
		return fmt.Errorf("subject changed: %s → %s", a, b)
	case !reflect.DeepEqual(a.Repository, b.Repository):
		return fmt.Errorf("repository changed: %s → %s", a, b)
	}
	return nil
}

// checkRenewTransition is the daemon's acceptance of a renewed fence
// (§4.3): same identity, same owner, same lease generation, and an expiry
// never earlier than before ("renew shortened lease expiry").
func checkRenewTransition(before, after execFence) error {
	if err := sameIdentity(before, after); err != nil {
		return err
	}
	if after.QueueLease.OwnerID != before.QueueLease.OwnerID || after.QueueLease.Generation != before.QueueLease.Generation {
		return fmt.Errorf("renew moved owner or generation: %s → %s", before, after)
	}
	if after.expiry().Before(before.expiry()) {
		return fmt.Errorf("renew shortened lease expiry: %s → %s", before.QueueLease.ExpiresAt, after.QueueLease.ExpiresAt)
	}
	return nil
}

// checkRecoverTransition is the daemon's acceptance of a recovered fence
// (§4.4): identity unchanged, the new owner, lease generation exactly +1.
func checkRecoverTransition(before, after execFence, newOwner string) error {
	if err := sameIdentity(before, after); err != nil {
		return err
	}
	if after.QueueLease.OwnerID != newOwner || after.QueueLease.Generation != before.QueueLease.Generation+1 {
		return fmt.Errorf("recover: want owner %s and lease generation %d, got %s", newOwner, before.QueueLease.Generation+1, after)
	}
	return nil
}

// fencedEntry is one FencedQueueEntry of a v2 lease.
type fencedEntry struct {
	Entry     queueEntryV2 `json:"entry"`
	Execution execFence    `json:"execution"`
}

type queueEntryV2 struct {
	queueEntry
	HeldAt  *string `json:"held_at"`
	RunAt   *string `json:"run_at"`
	Expires *uint64 `json:"expire_after_secs"`
}

// validate is FencedQueueEntry::validate plus the owner check of the
// dispatch tick (§4.2): a lease that fails it leaves the entry stranded.
func (fe fencedEntry) validate(owner string) error {
	x := fe.Execution
	if err := x.validate(true, x.Repository != nil); err != nil {
		return fmt.Errorf("entry %s: %v", fe.Entry.EntryID, err)
	}
	if x.Subject == nil {
		return fmt.Errorf("entry %s: fence without subject aborts the daemon's tick", fe.Entry.EntryID)
	}
	wf := ""
	if fe.Entry.WorkflowID != nil {
		wf = *fe.Entry.WorkflowID
	}
	switch {
	case x.QueueLease.EntryID != fe.Entry.EntryID:
		return fmt.Errorf("queue_lease.entry_id %s ≠ entry_id %s", x.QueueLease.EntryID, fe.Entry.EntryID)
	case wf != x.WorkflowID:
		return fmt.Errorf("entry.workflow_id %q ≠ execution.workflow_id %q", wf, x.WorkflowID)
	case fe.Entry.SubjectID != x.Subject.QualifiedID && !strings.HasSuffix(x.Subject.QualifiedID, ":"+fe.Entry.SubjectID):
		return fmt.Errorf("entry.subject_id %q does not match %q", fe.Entry.SubjectID, x.Subject.QualifiedID)
	case x.QueueLease.OwnerID != owner:
		return fmt.Errorf("queue_lease.owner_id %q, the daemon sent %q", x.QueueLease.OwnerID, owner)
	case fe.Entry.Status != "assigned" || fe.Entry.AssignedAt == nil:
		return fmt.Errorf("leased entry has status %q, assigned_at %v", fe.Entry.Status, fe.Entry.AssignedAt)
	}
	return nil
}

// expiryNear checks an expiry against now + ttl within slack (process
// start-up and clock reads on both sides).
func expiryNear(f execFence, from time.Time, ttl time.Duration) error {
	got := f.expiry()
	lo, hi := from.Add(ttl-2*time.Second), time.Now().Add(ttl+2*time.Second)
	if got.Before(lo) || got.After(hi) {
		return fmt.Errorf("expires_at %s, want about now + %v", f.QueueLease.ExpiresAt, ttl)
	}
	return nil
}
