package queuev2

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// FenceSchema is the only ExecutionFence schema (animus-execution-protocol
// 0.1.0).
const FenceSchema = "animus.execution-fence.v1"

// SubjectGeneration (§2.2, strict).
type SubjectGeneration struct {
	QualifiedID string `json:"qualified_id"`
	Generation  uint64 `json:"generation"`
}

// RepositoryReservation (§2.3, strict).
type RepositoryReservation struct {
	Repository string `json:"repository"`
	BaseRef    string `json:"base_ref"`
	HeadRef    string `json:"head_ref"`
}

// QueueLeaseFence (§2.4, strict). ExpiresAt stays the text the queue sent,
// so a fence goes back verbatim and a test can forge any value; Expiry
// parses it.
type QueueLeaseFence struct {
	EntryID    string `json:"entry_id"`
	OwnerID    string `json:"owner_id"`
	Generation uint64 `json:"generation"`
	ExpiresAt  string `json:"expires_at"`
}

// ExecutionFence (§2.5, strict): the ticket the daemon stores and sends
// back in every mutation.
type ExecutionFence struct {
	Schema             string                 `json:"schema"`
	Version            uint32                 `json:"version"`
	WorkflowID         string                 `json:"workflow_id"`
	WorkflowGeneration uint64                 `json:"workflow_generation"`
	Subject            *SubjectGeneration     `json:"subject,omitempty"`
	QueueLease         *QueueLeaseFence       `json:"queue_lease,omitempty"`
	Repository         *RepositoryReservation `json:"repository,omitempty"`
}

// Clone returns a deep copy a test may edit into a forged fence.
func (f ExecutionFence) Clone() ExecutionFence {
	b, _ := json.Marshal(f)
	var out ExecutionFence
	_ = json.Unmarshal(b, &out)
	return out
}

// EntryID is the queue entry the fence holds ("" without a queue lease).
func (f ExecutionFence) EntryID() string {
	if f.QueueLease == nil {
		return ""
	}
	return f.QueueLease.EntryID
}

// Key is the fence's identity without its expiry: two tickets with one key
// are the same hand-out.
func (f ExecutionFence) Key() string {
	if f.QueueLease == nil {
		return "(no queue_lease)"
	}
	return fmt.Sprintf("%s/%s/%d", f.QueueLease.EntryID, f.QueueLease.OwnerID, f.QueueLease.Generation)
}

// Expiry is queue_lease.expires_at, or the zero time when there is none or
// it is not RFC 3339.
func (f ExecutionFence) Expiry() time.Time {
	if f.QueueLease == nil {
		return time.Time{}
	}
	t, _ := parseExpiry(f.QueueLease.ExpiresAt)
	return t
}

func (f ExecutionFence) String() string {
	b, _ := json.Marshal(f)
	return string(b)
}

// parseExpiry parses a typed RFC 3339 datetime as strictly as Go decodes a
// time.Time from JSON.
func parseExpiry(s string) (time.Time, error) {
	var t time.Time
	err := t.UnmarshalText([]byte(s))
	return t, err
}

// Level is a validation level of the crate (§2.5).
type Level int

const (
	// Basic: schema, version, workflow id and generation, and each nested
	// object that is present.
	Basic Level = iota
	// QueueBacked: Basic and a queue_lease (every v2 mutation).
	QueueBacked
	// Coding: QueueBacked and a subject and a repository.
	Coding
)

// Validate is the crate's validation of a fence at level.
func (f ExecutionFence) Validate(level Level) error {
	switch {
	case f.Schema != FenceSchema:
		return fmt.Errorf("unsupported execution fence schema %q", f.Schema)
	case f.Version != 1:
		return fmt.Errorf("unsupported execution fence version %d", f.Version)
	case strings.TrimSpace(f.WorkflowID) == "":
		return errors.New("workflow_id must not be empty")
	case f.WorkflowGeneration == 0:
		return errors.New("workflow_generation must be greater than zero")
	}
	if s := f.Subject; s != nil {
		kind, id, ok := strings.Cut(s.QualifiedID, ":")
		if !ok || strings.TrimSpace(kind) == "" || strings.TrimSpace(id) == "" {
			return fmt.Errorf("subject qualified_id %q must use <kind>:<native-id> form", s.QualifiedID)
		}
		if s.Generation == 0 {
			return errors.New("subject generation must be greater than zero")
		}
	}
	if l := f.QueueLease; l != nil {
		if strings.TrimSpace(l.EntryID) == "" || strings.TrimSpace(l.OwnerID) == "" || l.Generation == 0 {
			return fmt.Errorf("queue_lease %+v: entry_id, owner_id and generation must be set", *l)
		}
		t, err := parseExpiry(l.ExpiresAt)
		if err != nil {
			return fmt.Errorf("queue_lease.expires_at %q is not RFC 3339", l.ExpiresAt)
		}
		if t.IsZero() {
			return fmt.Errorf("queue_lease.expires_at %q is the zero time", l.ExpiresAt)
		}
	}
	if r := f.Repository; r != nil {
		if strings.TrimSpace(r.Repository) == "" || !safeRef(r.BaseRef) || !safeRef(r.HeadRef) || r.BaseRef == r.HeadRef {
			return fmt.Errorf("repository reservation %+v is invalid", *r)
		}
	}
	if level >= QueueBacked && f.QueueLease == nil {
		return errors.New("queue-backed execution fence requires queue_lease")
	}
	if level >= Coding && (f.Subject == nil || f.Repository == nil) {
		return errors.New("coding execution fence requires subject and repository")
	}
	return nil
}

// safeRef: starts with refs/, no "..", no trailing slash (§2.3).
func safeRef(ref string) bool {
	return strings.HasPrefix(ref, "refs/") && !strings.Contains(ref, "..") && !strings.HasSuffix(ref, "/")
}

// checkTicket is what the daemon needs of every fence a queue hands it: a
// valid queue-backed fence (coding when it carries a repository) with a
// subject, since deriving local resources from a fence without subject
// aborts the whole dispatch tick (§4.2).
func checkTicket(f ExecutionFence) error {
	level := QueueBacked
	if f.Repository != nil {
		level = Coding
	}
	if err := f.Validate(level); err != nil {
		return err
	}
	if f.Subject == nil {
		return errors.New("fence without subject aborts the daemon's tick")
	}
	return nil
}

// SameIdentity: entry id, workflow id and generation, subject and
// repository are the same (what a renew or recover may never move).
func SameIdentity(before, after ExecutionFence) error {
	switch {
	case before.QueueLease == nil || after.QueueLease == nil || before.QueueLease.EntryID != after.QueueLease.EntryID:
		return fmt.Errorf("entry id changed: %s → %s", before, after)
	case before.WorkflowID != after.WorkflowID || before.WorkflowGeneration != after.WorkflowGeneration:
		return fmt.Errorf("workflow identity changed: %s → %s", before, after)
	case !equalPtr(before.Subject, after.Subject):
		return fmt.Errorf("subject changed: %s → %s", before, after)
	case !equalPtr(before.Repository, after.Repository):
		return fmt.Errorf("repository changed: %s → %s", before, after)
	}
	return nil
}

func equalPtr[T comparable](a, b *T) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}
