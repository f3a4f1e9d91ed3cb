package storage

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// Row is a subject as both databases store it: JSON-valued fields as the
// text the plugin wrote (so answers stay byte-identical whatever the
// database), times as integer nanoseconds, NULL as a nil pointer.
type Row struct {
	Seq                                 int64
	ID, Kind, Title, Status             string
	Body, Assignee, Parent, URL, Native *string
	Priority                            *int64
	Labels, Custom                      string  // JSON array / object, never NULL
	StatusMeta, Attachments             *string // JSON, NULL when absent
	CreatedNS, UpdatedNS                int64
}

// Columns is the select list, over a table aliased s, whose order Dest
// follows.
const Columns = `s.seq, s.id, s.kind, s.title, s.body, s.status, s.priority, s.assignee, s.labels,
	s.parent_id, s.url, s.created_at_ns, s.updated_at_ns, s.custom_fields, s.native_status,
	s.status_metadata, s.attachments`

// Dest is the scan destinations for Columns.
func (r *Row) Dest() []any {
	return []any{&r.Seq, &r.ID, &r.Kind, &r.Title, &r.Body, &r.Status, &r.Priority, &r.Assignee, &r.Labels,
		&r.Parent, &r.URL, &r.CreatedNS, &r.UpdatedNS, &r.Custom, &r.Native, &r.StatusMeta, &r.Attachments}
}

// Subject decodes the row. Children are filled by the caller.
func (r *Row) Subject() (*model.Subject, error) {
	s := model.Subject{Seq: r.Seq, ID: r.ID, Kind: r.Kind, Title: r.Title, Status: model.Status(r.Status),
		Description: r.Body, Assignee: r.Assignee, Parent: r.Parent, URL: r.URL, NativeStatus: r.Native}
	if !s.Status.Valid() {
		return nil, fmt.Errorf("subject %s: unknown status %q in the database", s.ID, r.Status)
	}
	if r.Priority != nil && *r.Priority >= 0 && *r.Priority <= 255 {
		p := int(*r.Priority)
		s.Priority = &p
	}
	s.CreatedAt = model.Time{Time: time.Unix(0, r.CreatedNS).UTC()}
	s.UpdatedAt = model.Time{Time: time.Unix(0, r.UpdatedNS).UTC()}
	if err := json.Unmarshal([]byte(r.Labels), &s.Labels); err != nil {
		return nil, fmt.Errorf("subject %s: labels: %w", s.ID, err)
	}
	if len(s.Labels) == 0 {
		s.Labels = nil
	}
	if err := json.Unmarshal([]byte(r.Custom), &s.Custom); err != nil {
		return nil, fmt.Errorf("subject %s: custom_fields: %w", s.ID, err)
	}
	if len(s.Custom) == 0 {
		s.Custom = nil
	}
	if r.StatusMeta != nil && *r.StatusMeta != "null" {
		s.StatusMetadata = json.RawMessage(*r.StatusMeta)
	}
	if r.Attachments != nil {
		if err := json.Unmarshal([]byte(*r.Attachments), &s.Attachments); err != nil {
			return nil, fmt.Errorf("subject %s: attachments: %w", s.ID, err)
		}
		if len(s.Attachments) == 0 {
			s.Attachments = nil
		}
	}
	return &s, nil
}

// EncodeRow is the stored form of s.
func EncodeRow(s *model.Subject) (Row, error) {
	r := Row{Seq: s.Seq, ID: s.ID, Kind: s.Kind, Title: s.Title, Status: string(s.Status), Body: s.Description,
		Assignee: s.Assignee, Parent: s.Parent, URL: s.URL, Native: s.NativeStatus,
		CreatedNS: s.CreatedAt.UnixNano(), UpdatedNS: s.UpdatedAt.UnixNano(), Custom: "{}"}
	labels := s.Labels
	if labels == nil {
		labels = []string{}
	}
	b, err := rustjson.Marshal(labels)
	if err != nil {
		return r, err
	}
	r.Labels = string(b)
	if len(s.Custom) > 0 {
		if b, err = rustjson.Marshal(s.Custom); err != nil {
			return r, err
		}
		r.Custom = string(b)
	}
	if s.StatusMetadata != nil {
		meta := string(s.StatusMetadata)
		r.StatusMeta = &meta
	}
	if len(s.Attachments) > 0 {
		if b, err = rustjson.Marshal(s.Attachments); err != nil {
			return r, err
		}
		a := string(b)
		r.Attachments = &a
	}
	if s.Priority != nil {
		p := int64(*s.Priority)
		r.Priority = &p
	}
	return r, nil
}

// Successor is the state an update writes: c.New with what a subject
// never changes (seq, id, kind, created_at) taken from old, and its
// stored form.
func Successor(old *model.Subject, c Change) (*model.Subject, Row, error) {
	n := c.New
	n.Seq, n.ID, n.Kind, n.CreatedAt = old.Seq, old.ID, old.Kind, old.CreatedAt
	r, err := EncodeRow(n)
	return n, r, err
}

// ApproxSize estimates a subject's encoded size, enough to keep a page
// far below the daemon's 8 MiB frame limit.
func ApproxSize(s *model.Subject) int {
	n := 300 + len(s.Title) + len(s.StatusMetadata)
	if s.Description != nil {
		n += len(*s.Description)
	}
	for _, v := range s.Custom {
		n += len(v) + 20
	}
	for _, l := range s.Labels {
		n += len(l) + 3
	}
	for _, a := range s.Attachments {
		n += 100 + len(a.URI) + len(a.Metadata)
	}
	return n
}
