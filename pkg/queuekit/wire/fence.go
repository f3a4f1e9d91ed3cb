package wire

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// The execution fence of animus-execution-protocol 0.1.0 (queue-v2.md
// §2.2–§2.5). All four objects are strict. Go field order is the
// alphabetical key order the references emit.

// FenceSchema and FenceVersion are the only values a fence may carry.
const (
	FenceSchema  = "animus.execution-fence.v1"
	FenceVersion = 1
)

// SubjectGeneration is one generation of a canonical subject.
type SubjectGeneration struct {
	Generation  uint64 `json:"generation"`
	QualifiedID string `json:"qualified_id"`
}

// RepositoryReservation is a repository/head-ref reservation.
type RepositoryReservation struct {
	BaseRef    string `json:"base_ref"`
	HeadRef    string `json:"head_ref"`
	Repository string `json:"repository"`
}

// QueueLeaseFence is the queue lease part of a fence. ExpiresAt is the
// text as received or as stored; it is parsed on input (a typed datetime in
// Rust) but never compared.
type QueueLeaseFence struct {
	EntryID    string `json:"entry_id"`
	ExpiresAt  string `json:"expires_at"`
	Generation uint64 `json:"generation"`
	OwnerID    string `json:"owner_id"`
}

// ExecutionFence is the ownership token of one workflow execution.
type ExecutionFence struct {
	QueueLease         *QueueLeaseFence       `json:"queue_lease,omitempty"`
	Repository         *RepositoryReservation `json:"repository,omitempty"`
	Schema             string                 `json:"schema"`
	Subject            *SubjectGeneration     `json:"subject,omitempty"`
	Version            uint32                 `json:"version"`
	WorkflowGeneration uint64                 `json:"workflow_generation"`
	WorkflowID         string                 `json:"workflow_id"`
}

func decodeSubjectGeneration(raw json.RawMessage) (*SubjectGeneration, error) {
	o, err := strictObject(raw, "SubjectGeneration", "qualified_id", "generation")
	if err != nil {
		return nil, err
	}
	var s SubjectGeneration
	if s.QualifiedID, err = o.reqString("qualified_id"); err != nil {
		return nil, err
	}
	if s.Generation, err = o.reqUint("generation"); err != nil {
		return nil, err
	}
	return &s, nil
}

func decodeRepository(raw json.RawMessage) (*RepositoryReservation, error) {
	o, err := strictObject(raw, "RepositoryReservation", "repository", "base_ref", "head_ref")
	if err != nil {
		return nil, err
	}
	var r RepositoryReservation
	if r.Repository, err = o.reqString("repository"); err != nil {
		return nil, err
	}
	if r.BaseRef, err = o.reqString("base_ref"); err != nil {
		return nil, err
	}
	if r.HeadRef, err = o.reqString("head_ref"); err != nil {
		return nil, err
	}
	return &r, nil
}

func decodeQueueLease(raw json.RawMessage) (*QueueLeaseFence, error) {
	o, err := strictObject(raw, "QueueLeaseFence", "entry_id", "owner_id", "generation", "expires_at")
	if err != nil {
		return nil, err
	}
	var q QueueLeaseFence
	if q.EntryID, err = o.reqString("entry_id"); err != nil {
		return nil, err
	}
	if q.OwnerID, err = o.reqString("owner_id"); err != nil {
		return nil, err
	}
	if q.Generation, err = o.reqUint("generation"); err != nil {
		return nil, err
	}
	if q.ExpiresAt, err = o.reqString("expires_at"); err != nil {
		return nil, err
	}
	if _, err := rustjson.ParseTime(q.ExpiresAt); err != nil {
		return nil, fmt.Errorf("invalid value for `expires_at`: %q is not an RFC 3339 datetime", q.ExpiresAt)
	}
	return &q, nil
}

// optNested decodes an optional strict nested object (null = absent).
func optNested[T any](o object, name string, decode func(json.RawMessage) (*T, error)) (*T, error) {
	v := o.get(name)
	if v == nil {
		return nil, nil
	}
	return decode(v)
}

// DecodeFence reads an ExecutionFence strictly, nested objects included.
func DecodeFence(raw json.RawMessage) (*ExecutionFence, error) {
	o, err := strictObject(raw, "ExecutionFence", "schema", "version", "workflow_id",
		"workflow_generation", "subject", "queue_lease", "repository")
	if err != nil {
		return nil, err
	}
	var f ExecutionFence
	if f.Schema, err = o.reqString("schema"); err != nil {
		return nil, err
	}
	if f.Version, err = o.reqUint32("version"); err != nil {
		return nil, err
	}
	if f.WorkflowID, err = o.reqString("workflow_id"); err != nil {
		return nil, err
	}
	if f.WorkflowGeneration, err = o.reqUint("workflow_generation"); err != nil {
		return nil, err
	}
	if f.Subject, err = optNested(o, "subject", decodeSubjectGeneration); err != nil {
		return nil, err
	}
	if f.QueueLease, err = optNested(o, "queue_lease", decodeQueueLease); err != nil {
		return nil, err
	}
	if f.Repository, err = optNested(o, "repository", decodeRepository); err != nil {
		return nil, err
	}
	return &f, nil
}

// Validate is the crate's basic fence validation; the messages are the
// crate's, returned verbatim as -32602 messages.
func (f *ExecutionFence) Validate() error {
	if f.Schema != FenceSchema {
		return fmt.Errorf("unsupported execution fence schema '%s'; expected '%s'", f.Schema, FenceSchema)
	}
	if f.Version != FenceVersion {
		return fmt.Errorf("unsupported execution fence version %d; expected %d", f.Version, FenceVersion)
	}
	if err := nonBlank("workflow_id", f.WorkflowID); err != nil {
		return err
	}
	if err := positive("workflow_generation", f.WorkflowGeneration); err != nil {
		return err
	}
	if f.Subject != nil {
		if err := f.Subject.Validate(); err != nil {
			return err
		}
	}
	if q := f.QueueLease; q != nil {
		if err := nonBlank("queue_lease.entry_id", q.EntryID); err != nil {
			return err
		}
		if err := nonBlank("queue_lease.owner_id", q.OwnerID); err != nil {
			return err
		}
		if err := positive("queue_lease.generation", q.Generation); err != nil {
			return err
		}
	}
	if f.Repository != nil {
		return f.Repository.Validate()
	}
	return nil
}

// ValidateQueueBacked is basic validation plus a queue lease, what every
// queue v2 mutation requires.
func (f *ExecutionFence) ValidateQueueBacked() error {
	if err := f.Validate(); err != nil {
		return err
	}
	if f.QueueLease == nil {
		return fmt.Errorf("queue-backed execution fence requires queue_lease")
	}
	return nil
}

// Validate checks the <kind>:<native-id> form and a positive generation.
func (s *SubjectGeneration) Validate() error {
	kind, id, ok := strings.Cut(s.QualifiedID, ":")
	if !ok || strings.TrimSpace(kind) == "" || strings.TrimSpace(id) == "" {
		return fmt.Errorf("subject qualified_id must use <kind>:<native-id> form")
	}
	return positive("subject generation", s.Generation)
}

// Validate checks a reservation's repository and refs.
func (r *RepositoryReservation) Validate() error {
	if err := nonBlank("repository", r.Repository); err != nil {
		return err
	}
	for _, ref := range []struct{ name, v string }{{"base_ref", r.BaseRef}, {"head_ref", r.HeadRef}} {
		if !safeRef(ref.v) {
			return fmt.Errorf("%s must be a safe fully-qualified git ref", ref.name)
		}
	}
	if r.BaseRef == r.HeadRef {
		return fmt.Errorf("repository reservation base_ref and head_ref must differ")
	}
	return nil
}

// CollisionKey is the protocol's reservation collision key: the trimmed,
// ASCII-lowercased repository and the exact head ref.
func (r *RepositoryReservation) CollisionKey() string {
	return asciiLower(strings.TrimSpace(r.Repository)) + "\n" + r.HeadRef
}

func safeRef(ref string) bool {
	return strings.HasPrefix(ref, "refs/") && !strings.Contains(ref, "..") && !strings.HasSuffix(ref, "/")
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func nonBlank(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("%s must not be empty", field)
	}
	return nil
}

func positive(field string, v uint64) error {
	if v == 0 {
		return fmt.Errorf("%s must be greater than zero", field)
	}
	return nil
}
