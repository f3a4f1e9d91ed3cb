package model

import (
	"encoding/json"
	"slices"
)

// Subject is the wire Subject. Field order is the Rust struct's, and every
// optional field is omitted at its default, so a subject that uses none of
// the v0.1.1 fields encodes exactly as a v0.1.0 backend would write it.
type Subject struct {
	ID             string                     `json:"id"`
	Kind           string                     `json:"kind"`
	Title          string                     `json:"title"`
	Description    *string                    `json:"description,omitempty"`
	Status         Status                     `json:"status"`
	Priority       *int                       `json:"priority,omitempty"`
	Assignee       *string                    `json:"assignee,omitempty"`
	Labels         []string                   `json:"labels,omitempty"`
	Parent         *string                    `json:"parent,omitempty"`
	Children       []string                   `json:"children,omitempty"`
	URL            *string                    `json:"url,omitempty"`
	CreatedAt      Time                       `json:"created_at"`
	UpdatedAt      Time                       `json:"updated_at"`
	Custom         map[string]json.RawMessage `json:"custom,omitempty"`
	NativeStatus   *string                    `json:"native_status,omitempty"`
	StatusMetadata json.RawMessage            `json:"status_metadata,omitempty"` // nil at JSON null
	Attachments    []Attachment               `json:"attachments,omitempty"`

	// Seq is the store's row sequence (the keyset cursor); never on the wire.
	Seq int64 `json:"-"`
}

// Attachment is SubjectAttachment.
type Attachment struct {
	ID       string          `json:"id"`
	Kind     string          `json:"kind"`
	URI      string          `json:"uri"`
	Title    *string         `json:"title,omitempty"`
	MimeType *string         `json:"mime_type,omitempty"`
	Metadata json.RawMessage `json:"metadata,omitempty"` // nil at JSON null
}

// Event is SubjectChangedEvent.
type Event struct {
	ID                    string     `json:"id"`
	ChangeKind            ChangeKind `json:"change_kind"`
	Subject               *Subject   `json:"subject"`
	PreviousNativeStatus  *string    `json:"previous_native_status,omitempty"`
	PreviousDispatchLabel *string    `json:"previous_dispatch_label,omitempty"`
}

// Clone returns a deep copy, so a patch can be computed without touching
// the subject it started from.
func (s *Subject) Clone() *Subject {
	c := *s
	c.Labels = slices.Clone(s.Labels)
	c.Children = slices.Clone(s.Children)
	c.Attachments = slices.Clone(s.Attachments)
	if s.Custom != nil {
		c.Custom = make(map[string]json.RawMessage, len(s.Custom))
		for k, v := range s.Custom {
			c.Custom[k] = v
		}
	}
	return &c
}

// HasLabel reports whether the subject carries label l.
func (s *Subject) HasLabel(l string) bool { return slices.Contains(s.Labels, l) }
