package queuesqlite

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The queue/v2 wire types as the 0.7 daemon decodes them (queue-v2.md §2),
// and the daemon's own acceptance rules for what comes back (§4.2–§4.4).
// The daemon decodes every v2 response strictly, so these are decoded with
// unknown fields refused; only the embedded QueueEntry is lenient, which is
// why FencedQueueEntry keeps it raw.

const fenceSchema = "animus.execution-fence.v1"

type subjectGen struct {
	QualifiedID string `json:"qualified_id"`
	Generation  uint64 `json:"generation"`
}

type reservation struct {
	Repository string `json:"repository"`
	BaseRef    string `json:"base_ref"`
	HeadRef    string `json:"head_ref"`
}

type leaseFence struct {
	EntryID    string    `json:"entry_id"`
	OwnerID    string    `json:"owner_id"`
	Generation uint64    `json:"generation"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// fence is ExecutionFence. The daemon stores it and sends it back verbatim
// in every ticket mutation.
type fence struct {
	Schema             string       `json:"schema"`
	Version            uint32       `json:"version"`
	WorkflowID         string       `json:"workflow_id"`
	WorkflowGeneration uint64       `json:"workflow_generation"`
	Subject            *subjectGen  `json:"subject,omitempty"`
	QueueLease         *leaseFence  `json:"queue_lease,omitempty"`
	Repository         *reservation `json:"repository,omitempty"`
}

func (f fence) entryID() string { return f.QueueLease.EntryID }

// key is the fence's identity without its expiry: two tickets with one key
// are the same hand-out.
func (f fence) key() string {
	return fmt.Sprintf("%s/%s/%d", f.QueueLease.EntryID, f.QueueLease.OwnerID, f.QueueLease.Generation)
}

type fencedEntry struct {
	Entry     json.RawMessage `json:"entry"`
	Execution fence           `json:"execution"`
}

// queueEntry is the 0.3.2 QueueEntry (lenient) as list and lease return it.
type queueEntry struct {
	EntryID    string `json:"entry_id"`
	SubjectID  string `json:"subject_id"`
	TaskID     string `json:"task_id"`
	Status     string `json:"status"`
	WorkflowID string `json:"workflow_id"`
	AssignedAt string `json:"assigned_at"`
	RunAt      string `json:"run_at"`
	Dispatch   struct {
		WorkflowRef string `json:"workflow_ref"`
	} `json:"subject_dispatch"`
}

type leaseBlock struct {
	EntryID       string `json:"entry_id"`
	Reason        string `json:"reason"`
	ConflictsWith *fence `json:"conflicts_with,omitempty"`
}

type leaseV2 struct {
	Leased  []fencedEntry `json:"leased"`
	Blocked []leaseBlock  `json:"blocked,omitempty"`
}

type mutation struct {
	Outcome   string `json:"outcome"`
	Execution *fence `json:"execution,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

type enqueueV2 struct {
	Enqueued bool       `json:"enqueued"`
	EntryID  string     `json:"entry_id"`
	Subject  subjectGen `json:"subject"`
	Warning  string     `json:"warning,omitempty"`
}

// decodeStrict decodes like serde with deny_unknown_fields: an extra key
// anywhere in the strict types is a hard error for the daemon's call.
func decodeStrict(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%s does not decode strictly: %w", raw, err)
	}
	return nil
}

// checkFence is the daemon's coding-fence validation (basic + queue-backed
// + subject): a fence without subject aborts the whole dispatch tick.
func checkFence(f fence) error {
	switch {
	case f.Schema != fenceSchema || f.Version != 1:
		return fmt.Errorf("fence schema %q version %d", f.Schema, f.Version)
	case strings.TrimSpace(f.WorkflowID) == "" || f.WorkflowGeneration == 0:
		return fmt.Errorf("fence workflow %q generation %d", f.WorkflowID, f.WorkflowGeneration)
	case f.Subject == nil || f.Subject.Generation == 0:
		return errors.New("fence has no subject generation")
	case f.QueueLease == nil:
		return errors.New("queue-backed execution fence requires queue_lease")
	case strings.TrimSpace(f.QueueLease.EntryID) == "" || strings.TrimSpace(f.QueueLease.OwnerID) == "" ||
		f.QueueLease.Generation == 0 || f.QueueLease.ExpiresAt.IsZero():
		return fmt.Errorf("incomplete queue_lease %+v", *f.QueueLease)
	}
	kind, id, ok := strings.Cut(f.Subject.QualifiedID, ":")
	if !ok || strings.TrimSpace(kind) == "" || strings.TrimSpace(id) == "" {
		return fmt.Errorf("subject qualified_id %q must use <kind>:<native-id> form", f.Subject.QualifiedID)
	}
	return nil
}

// checkLeased is what the tick applies to each leased item before it
// reserves local resources: FencedQueueEntry::validate, the owner it sent,
// and a workflow id it minted for this call (or the entry's kept one).
func checkLeased(fe fencedEntry, owner string, sent []string, kept string) (queueEntry, error) {
	var e queueEntry
	if err := json.Unmarshal(fe.Entry, &e); err != nil {
		return e, err
	}
	f := fe.Execution
	if err := checkFence(f); err != nil {
		return e, err
	}
	switch {
	case f.QueueLease.EntryID != e.EntryID:
		return e, fmt.Errorf("queue_lease.entry_id %s != entry %s", f.QueueLease.EntryID, e.EntryID)
	case e.WorkflowID != f.WorkflowID:
		return e, fmt.Errorf("entry workflow_id %q != fence %q", e.WorkflowID, f.WorkflowID)
	case e.SubjectID != f.Subject.QualifiedID && !strings.HasSuffix(f.Subject.QualifiedID, ":"+e.SubjectID):
		return e, fmt.Errorf("entry subject_id %q does not match %q", e.SubjectID, f.Subject.QualifiedID)
	case f.QueueLease.OwnerID != owner:
		return e, fmt.Errorf("lease owner %q, the daemon is %q", f.QueueLease.OwnerID, owner)
	case e.Status != "assigned":
		return e, fmt.Errorf("leased entry is %q", e.Status)
	case kept == "" && !slices.Contains(sent, f.WorkflowID):
		return e, fmt.Errorf("workflow id %q was not sent (%v)", f.WorkflowID, sent)
	case kept != "" && f.WorkflowID != kept:
		return e, fmt.Errorf("workflow id %q, the entry had %q before put-back", f.WorkflowID, kept)
	}
	return e, nil
}

// sameIdentity: entry id, workflow id/generation, subject and repository
// never change for a ticket's lifetime.
func sameIdentity(old, got fence) error {
	if err := checkFence(got); err != nil {
		return err
	}
	switch {
	case got.QueueLease.EntryID != old.QueueLease.EntryID:
		return fmt.Errorf("entry id changed %s → %s", old.QueueLease.EntryID, got.QueueLease.EntryID)
	case got.WorkflowID != old.WorkflowID || got.WorkflowGeneration != old.WorkflowGeneration:
		return fmt.Errorf("workflow changed %s/%d → %s/%d", old.WorkflowID, old.WorkflowGeneration, got.WorkflowID, got.WorkflowGeneration)
	case *got.Subject != *old.Subject:
		return fmt.Errorf("subject changed %+v → %+v", *old.Subject, *got.Subject)
	case (got.Repository == nil) != (old.Repository == nil) || (got.Repository != nil && *got.Repository != *old.Repository):
		return fmt.Errorf("repository changed %+v → %+v", old.Repository, got.Repository)
	}
	return nil
}

// checkTransition is the renewal rule of §4.3 (same owner ⇒ same lease
// generation and an expiry not earlier, "renew shortened lease expiry" is
// fatal) and the recovery rule of §4.4 (new owner, generation exactly +1).
// newOwner "" means a renewal.
func checkTransition(m mutation, old fence, newOwner string) (fence, error) {
	if m.Outcome != "applied" && m.Outcome != "already_applied" {
		return fence{}, fmt.Errorf("rejected with %s: %s", m.Outcome, m.Reason)
	}
	if m.Execution == nil {
		return fence{}, fmt.Errorf("%s without execution", m.Outcome)
	}
	got := *m.Execution
	if err := sameIdentity(old, got); err != nil {
		return got, err
	}
	ol, gl := old.QueueLease, got.QueueLease
	if newOwner == "" {
		switch {
		case gl.OwnerID != ol.OwnerID || gl.Generation != ol.Generation:
			return got, fmt.Errorf("renew moved the lease %s/%d → %s/%d", ol.OwnerID, ol.Generation, gl.OwnerID, gl.Generation)
		case gl.ExpiresAt.Before(ol.ExpiresAt):
			return got, fmt.Errorf("renew shortened lease expiry %v → %v", ol.ExpiresAt, gl.ExpiresAt)
		}
		return got, nil
	}
	if gl.OwnerID != newOwner || gl.Generation != ol.Generation+1 {
		return got, fmt.Errorf("recover gave %s/%d, want %s/%d", gl.OwnerID, gl.Generation, newOwner, ol.Generation+1)
	}
	return got, nil
}

// newUUID is a UUID v4, what the daemon mints for owner and workflow ids.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
