package model

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// Opt is a field that may be absent, explicitly null (clear), or set.
type Opt[T any] struct {
	Set   bool // the key was present
	Value *T   // nil with Set = clear
}

// Patch is a decoded SubjectPatch plus the documented extensions
// (subject.md §7 A10, §7.4): the CLI's priority, labels (whole-set
// replace), body/description and title, and native_status,
// status_metadata, attachments_add/attachments_remove, parent and url.
// Unknown keys are ignored.
type Patch struct {
	Status            *Status
	Assignee          Opt[string]
	LabelsAdd         []string
	LabelsRemove      []string
	Labels            *[]string // replace the whole set, before add/remove
	Comment           *string
	Custom            map[string]json.RawMessage // a nil value deletes the key
	Priority          Opt[int]
	Title             *string
	Description       Opt[string]
	NativeStatus      Opt[string]
	StatusMetadata    Opt[json.RawMessage]
	AttachmentsAdd    []Attachment
	AttachmentsRemove []string
	Parent            Opt[string]
	URL               Opt[string]
}

// DecodePatch reads a patch object. A null or absent patch is empty.
func DecodePatch(raw json.RawMessage) (Patch, error) {
	obj, err := object("patch", raw)
	if err != nil {
		return Patch{}, err
	}
	return decodePatchObject(obj)
}

// DecodePatchFields reads a patch from already split members: the
// top-level fields of update params that carry no "patch" object.
func DecodePatchFields(obj map[string]json.RawMessage) (Patch, error) {
	return decodePatchObject(obj)
}

func decodePatchObject(obj map[string]json.RawMessage) (p Patch, err error) {
	if s, err := optString("status", obj["status"]); err != nil {
		return p, err
	} else if s != nil {
		st, err := ParseStatus("status", *s)
		if err != nil {
			return p, err
		}
		p.Status = &st
	}
	if p.Assignee, err = optField(obj, "assignee"); err != nil {
		return p, err
	}
	if p.LabelsAdd, err = labelList("labels_add", obj["labels_add"]); err != nil {
		return p, err
	}
	if p.LabelsRemove, err = labelList("labels_remove", obj["labels_remove"]); err != nil {
		return p, err
	}
	if raw, ok := obj["labels"]; ok && !rustjson.IsNull(raw) {
		l, err := labelList("labels", raw)
		if err != nil {
			return p, err
		}
		p.Labels = &l
	}
	if p.Comment, err = optString("comment", obj["comment"]); err != nil {
		return p, err
	}
	if p.Title, err = title(obj["title"], false); err != nil {
		return p, err
	}
	if p.Description, err = description(obj); err != nil {
		return p, err
	}
	if raw, ok := obj["priority"]; ok {
		v, err := ParsePriority("priority", raw)
		if err != nil {
			return p, err
		}
		p.Priority = Opt[int]{Set: true, Value: v}
	}
	if p.NativeStatus, err = optField(obj, "native_status"); err != nil {
		return p, err
	}
	if p.Custom, err = customMap(obj["custom"], true); err != nil {
		return p, err
	}
	if v, ok := p.Custom["native_status"]; ok {
		// The Rust plugin's only way to set native_status; kept working.
		delete(p.Custom, "native_status")
		if !p.NativeStatus.Set {
			p.NativeStatus = nativeFromCustom(v)
		}
	}
	if raw, ok := obj["status_metadata"]; ok {
		v, err := rustjson.Canonical(raw)
		if err != nil {
			return p, inputErr("status_metadata", "invalid status_metadata: %v", err)
		}
		p.StatusMetadata = Opt[json.RawMessage]{Set: true}
		if v != nil {
			p.StatusMetadata.Value = &v
		}
	}
	if p.AttachmentsAdd, err = attachments("attachments_add", obj["attachments_add"]); err != nil {
		return p, err
	}
	if p.AttachmentsRemove, err = stringList("attachments_remove", obj["attachments_remove"]); err != nil {
		return p, err
	}
	if p.Parent, err = optField(obj, "parent"); err != nil {
		return p, err
	}
	p.URL, err = optField(obj, "url")
	return p, err
}

// nativeFromCustom follows the Rust plugin: a string sets, null clears,
// any other JSON is kept as its JSON text (5 → "5").
func nativeFromCustom(v json.RawMessage) Opt[string] {
	if v == nil {
		return Opt[string]{Set: true}
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		s = string(v)
	}
	return Opt[string]{Set: true, Value: &s}
}

func optField(obj map[string]json.RawMessage, key string) (Opt[string], error) {
	raw, ok := obj[key]
	if !ok {
		return Opt[string]{}, nil
	}
	v, err := optString(key, raw)
	return Opt[string]{Set: true, Value: v}, err
}

func title(raw json.RawMessage, required bool) (*string, error) {
	t, err := optString("title", raw)
	if err != nil {
		return nil, err
	}
	if t == nil && !required {
		return nil, nil
	}
	if t == nil || strings.TrimSpace(*t) == "" {
		return nil, inputErr("title", "title must be a non-empty string")
	}
	return t, nil
}

// description reads "description", or the CLI's "body" when description
// is absent.
func description(obj map[string]json.RawMessage) (Opt[string], error) {
	if _, ok := obj["description"]; ok {
		return optField(obj, "description")
	}
	return optField(obj, "body")
}

// labelList is a list of non-empty labels, deduplicated in order.
func labelList(field string, raw json.RawMessage) ([]string, error) {
	l, err := stringList(field, raw)
	if err != nil {
		return nil, err
	}
	out := l[:0:0]
	for _, s := range l {
		if s == "" {
			return nil, inputErr(field, "invalid %s: labels must be non-empty strings", field)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// customMap decodes custom fields, normalizing each value. With keepNulls
// a JSON null is kept as a nil value (a patch's "delete this key");
// otherwise it is dropped.
func customMap(raw json.RawMessage, keepNulls bool) (map[string]json.RawMessage, error) {
	obj, err := object("custom", raw)
	if err != nil || obj == nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(obj))
	for k, v := range obj {
		n, err := rustjson.Canonical(v)
		if err != nil {
			return nil, inputErr("custom", "invalid custom.%s: %v", k, err)
		}
		if n != nil || keepNulls {
			out[k] = n
		}
	}
	return out, nil
}

func attachments(field string, raw json.RawMessage) ([]Attachment, error) {
	if rustjson.IsNull(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, inputErr(field, "invalid %s: expected an array of attachments", field)
	}
	out := make([]Attachment, 0, len(items))
	for i, item := range items {
		obj, err := object(field, item)
		if err != nil {
			return nil, err
		}
		var a Attachment
		for _, req := range []struct {
			key string
			dst *string
		}{{"id", &a.ID}, {"kind", &a.Kind}, {"uri", &a.URI}} {
			v, err := optString(field, obj[req.key])
			if err != nil || v == nil || *v == "" {
				return nil, inputErr(field, "invalid %s[%d]: %q must be a non-empty string", field, i, req.key)
			}
			*req.dst = *v
		}
		if a.Title, err = optString(field, obj["title"]); err != nil {
			return nil, err
		}
		if a.MimeType, err = optString(field, obj["mime_type"]); err != nil {
			return nil, err
		}
		if a.Metadata, err = rustjson.Canonical(obj["metadata"]); err != nil {
			return nil, inputErr(field, "invalid %s[%d].metadata: %v", field, i, err)
		}
		if slices.ContainsFunc(out, func(b Attachment) bool { return b.ID == a.ID }) {
			return nil, inputErr(field, "invalid %s: attachment id %q appears twice", field, a.ID)
		}
		out = append(out, a)
	}
	return out, nil
}

// Apply returns the subject after the patch. It never mutates old. Labels
// are replaced (extension), then removed, then added, so a label in both
// labels_remove and labels_add stays, as in the Rust plugin. Setting a
// native status that has a dispatch hint also moves the status to the
// hint's bucket unless the same patch sets the status itself. updated_at
// always moves forward, even for an empty patch or a comment alone.
func (p *Patch) Apply(old *Subject, hints Hints, now time.Time) *Subject {
	n := old.Clone()
	if p.Title != nil {
		n.Title = *p.Title
	}
	setOpt(&n.Description, p.Description)
	setOpt(&n.Priority, p.Priority)
	setOpt(&n.Assignee, p.Assignee)
	setOpt(&n.Parent, p.Parent)
	setOpt(&n.URL, p.URL)
	if p.Labels != nil {
		n.Labels = slices.Clone(*p.Labels)
	}
	n.Labels = slices.DeleteFunc(n.Labels, func(l string) bool { return slices.Contains(p.LabelsRemove, l) })
	for _, l := range p.LabelsAdd {
		if !slices.Contains(n.Labels, l) {
			n.Labels = append(n.Labels, l)
		}
	}
	for k, v := range p.Custom {
		if n.Custom == nil {
			n.Custom = map[string]json.RawMessage{}
		}
		if v == nil {
			delete(n.Custom, k)
		} else {
			n.Custom[k] = v
		}
	}
	if len(n.Custom) == 0 {
		n.Custom = nil
	}
	if p.NativeStatus.Set {
		n.NativeStatus = p.NativeStatus.Value
		if h, ok := hintFor(hints, n.NativeStatus); ok && p.Status == nil {
			n.Status = h.MapsTo
		}
	}
	if p.Status != nil {
		n.Status = *p.Status
	}
	if p.StatusMetadata.Set {
		n.StatusMetadata = nil
		if p.StatusMetadata.Value != nil {
			n.StatusMetadata = *p.StatusMetadata.Value
		}
	}
	n.Attachments = slices.DeleteFunc(n.Attachments, func(a Attachment) bool {
		return slices.Contains(p.AttachmentsRemove, a.ID) ||
			slices.ContainsFunc(p.AttachmentsAdd, func(b Attachment) bool { return b.ID == a.ID })
	})
	n.Attachments = append(n.Attachments, p.AttachmentsAdd...)
	if len(n.Attachments) == 0 {
		n.Attachments = nil
	}
	n.UpdatedAt = Time{laterOf(now, old.UpdatedAt.Time)}
	return n
}

func setOpt[T any](dst **T, o Opt[T]) {
	if o.Set {
		*dst = o.Value
	}
}

func hintFor(hints Hints, native *string) (DispatchHint, bool) {
	if native == nil {
		return DispatchHint{}, false
	}
	return hints.Lookup(*native)
}

// laterOf keeps timestamps from going backwards when clocks of two
// processes (or one clock's adjustments) disagree.
func laterOf(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}
