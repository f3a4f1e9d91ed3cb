package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/model"
)

// columns is the select list scanRow reads, in order.
const columns = `s.seq, s.id, s.kind, s.title, s.body, s.status, s.priority, s.assignee, s.labels,
	s.parent_id, s.url, s.created_at_ns, s.updated_at_ns, s.custom_fields, s.native_status,
	s.status_metadata, s.attachments`

type scanner interface{ Scan(dest ...any) error }

// scanRow reads one subject. Children are filled by the caller.
func scanRow(r scanner) (*model.Subject, error) {
	var (
		s                                   model.Subject
		body, assignee, parent, url, native sql.NullString
		statusMeta, attachments             sql.NullString
		priority                            sql.NullInt64
		labels, custom, status              string
		createdNS, updatedNS                int64
	)
	err := r.Scan(&s.Seq, &s.ID, &s.Kind, &s.Title, &body, &status, &priority, &assignee, &labels,
		&parent, &url, &createdNS, &updatedNS, &custom, &native, &statusMeta, &attachments)
	if err != nil {
		return nil, err
	}
	s.Status = model.Status(status)
	if !s.Status.Valid() {
		return nil, fmt.Errorf("subject %s: unknown status %q in the database", s.ID, status)
	}
	s.Description, s.Assignee, s.Parent, s.URL, s.NativeStatus = ptr(body), ptr(assignee), ptr(parent), ptr(url), ptr(native)
	if priority.Valid && priority.Int64 >= 0 && priority.Int64 <= 255 {
		p := int(priority.Int64)
		s.Priority = &p
	}
	s.CreatedAt = model.Time{Time: time.Unix(0, createdNS).UTC()}
	s.UpdatedAt = model.Time{Time: time.Unix(0, updatedNS).UTC()}
	if err := json.Unmarshal([]byte(labels), &s.Labels); err != nil {
		return nil, fmt.Errorf("subject %s: labels: %w", s.ID, err)
	}
	if len(s.Labels) == 0 {
		s.Labels = nil
	}
	if err := json.Unmarshal([]byte(custom), &s.Custom); err != nil {
		return nil, fmt.Errorf("subject %s: custom_fields: %w", s.ID, err)
	}
	if len(s.Custom) == 0 {
		s.Custom = nil
	}
	if statusMeta.Valid && statusMeta.String != "null" {
		s.StatusMetadata = json.RawMessage(statusMeta.String)
	}
	if attachments.Valid {
		if err := json.Unmarshal([]byte(attachments.String), &s.Attachments); err != nil {
			return nil, fmt.Errorf("subject %s: attachments: %w", s.ID, err)
		}
		if len(s.Attachments) == 0 {
			s.Attachments = nil
		}
	}
	return &s, nil
}

func ptr(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return &n.String
}

// rowValues are the stored forms of a subject's columns.
type rowValues struct {
	labels, custom    string
	statusMeta, attch any // NULL or text
	priority          any
}

func encodeRow(s *model.Subject) (rowValues, error) {
	var v rowValues
	labels := s.Labels
	if labels == nil {
		labels = []string{}
	}
	b, err := rustjson.Marshal(labels)
	if err != nil {
		return v, err
	}
	v.labels = string(b)
	v.custom = "{}"
	if len(s.Custom) > 0 {
		if b, err = rustjson.Marshal(s.Custom); err != nil {
			return v, err
		}
		v.custom = string(b)
	}
	if s.StatusMetadata != nil {
		v.statusMeta = string(s.StatusMetadata)
	}
	if len(s.Attachments) > 0 {
		if b, err = rustjson.Marshal(s.Attachments); err != nil {
			return v, err
		}
		v.attch = string(b)
	}
	if s.Priority != nil {
		v.priority = int64(*s.Priority)
	}
	return v, nil
}

func nullable(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
