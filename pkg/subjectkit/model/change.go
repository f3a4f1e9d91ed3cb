package model

import (
	"encoding/json"
	"slices"
	"time"
)

// Classify builds the event for a change from old to n (subject.md §7.4):
// status-changed when the normalized status moved; else
// dispatch-label-changed when the resolved label moved; else
// attachment-added / attachment-removed when attachment ids came or went;
// else updated. previous_native_status is set when there was one and the
// status or the native status moved; previous_dispatch_label when there
// was one and it moved. Both are omitted when unknown.
func Classify(old, n *Subject, hints Hints) Event {
	ev := Event{ID: n.ID, ChangeKind: Updated, Subject: n}
	oldLabel, newLabel := hints.Label(old.NativeStatus), hints.Label(n.NativeStatus)
	labelMoved := !equalPtr(oldLabel, newLabel)
	switch {
	case old.Status != n.Status:
		ev.ChangeKind = StatusChanged
	case labelMoved:
		ev.ChangeKind = DispatchLabelChanged
	case attachmentIDsMissing(n.Attachments, old.Attachments):
		ev.ChangeKind = AttachmentAdded
	case attachmentIDsMissing(old.Attachments, n.Attachments):
		ev.ChangeKind = AttachmentRemoved
	}
	if old.NativeStatus != nil && (old.Status != n.Status || !equalPtr(old.NativeStatus, n.NativeStatus)) {
		ev.PreviousNativeStatus = old.NativeStatus
	}
	if oldLabel != nil && labelMoved {
		ev.PreviousDispatchLabel = oldLabel
	}
	return ev
}

// attachmentIDsMissing reports whether some id in a is not in b.
func attachmentIDsMissing(a, b []Attachment) bool {
	return slices.ContainsFunc(a, func(x Attachment) bool {
		return !slices.ContainsFunc(b, func(y Attachment) bool { return y.ID == x.ID })
	})
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Draft is decoded create params (subject.md §7.1): title, description or
// body, and the optional fields. Caller ids and timestamps are ignored.
type Draft struct {
	Kind           *string
	Title          string
	Description    *string
	Status         *Status
	Priority       *int
	Labels         []string
	Assignee       *string
	Custom         map[string]json.RawMessage
	NativeStatus   *string
	StatusMetadata json.RawMessage
	Attachments    []Attachment
	Parent         *string
	URL            *string
}

// DecodeDraft reads create params.
func DecodeDraft(raw json.RawMessage) (d Draft, err error) {
	obj, err := object("params", raw)
	if err != nil {
		return d, err
	}
	t, err := title(obj["title"], true)
	if err != nil {
		return d, err
	}
	d.Title = *t
	if d.Kind, err = optString("kind", obj["kind"]); err != nil {
		return d, err
	}
	// The remaining fields are exactly a patch's, read by the same code so
	// create and update can never disagree on a field's meaning.
	p, err := decodePatchObject(obj)
	if err != nil {
		return d, err
	}
	d.Description, d.Status, d.Priority = p.Description.Value, p.Status, p.Priority.Value
	d.Assignee, d.NativeStatus = p.Assignee.Value, p.NativeStatus.Value
	if p.Labels != nil {
		d.Labels = *p.Labels
	}
	for k, v := range p.Custom {
		if v != nil {
			if d.Custom == nil {
				d.Custom = map[string]json.RawMessage{}
			}
			d.Custom[k] = v
		}
	}
	if p.StatusMetadata.Value != nil {
		d.StatusMetadata = *p.StatusMetadata.Value
	}
	if d.Attachments, err = attachments("attachments", obj["attachments"]); err != nil {
		return d, err
	}
	d.Parent, d.URL = p.Parent.Value, p.URL.Value
	return d, nil
}

// Subject builds the new subject. Without an explicit status it is ready,
// or the bucket of its native status's dispatch hint.
func (d *Draft) Subject(id, kind string, hints Hints, now time.Time) *Subject {
	s := &Subject{
		ID: id, Kind: kind, Title: d.Title, Description: d.Description, Status: Ready,
		Priority: d.Priority, Assignee: d.Assignee, Labels: d.Labels, Parent: d.Parent, URL: d.URL,
		CreatedAt: Time{now}, UpdatedAt: Time{now}, Custom: d.Custom, NativeStatus: d.NativeStatus,
		StatusMetadata: d.StatusMetadata, Attachments: d.Attachments,
	}
	if h, ok := hintFor(hints, d.NativeStatus); ok {
		s.Status = h.MapsTo
	}
	if d.Status != nil {
		s.Status = *d.Status
	}
	return s
}
