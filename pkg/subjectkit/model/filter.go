package model

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// Filter is a decoded SubjectFilter. Empty slices and nil pointers mean
// "no constraint"; every present field must hold (AND).
type Filter struct {
	Status            []Status
	Kind              []string
	Assignee          []string
	LabelsAny         []string
	LabelsAll         []string
	UpdatedSince      *time.Time
	Cursor            string
	Limit             int // 0 = absent
	NativeStatus      *string
	DispatchLabel     *string
	HasAttachmentKind *string

	// ScopeKinds is a top-level "kind" beside a wrapped "filter" (the
	// daemon's watch shape {kind, filter}): an extra kind constraint.
	ScopeKinds []string
}

// DecodeFilterParams reads list or watch params in every shape callers
// use (subject.md §2.1): a bare SubjectFilter (CLI, spec §7.1), the
// daemon's {"filter": {…}} (with an optional top-level "kind"), or nothing.
func DecodeFilterParams(raw json.RawMessage) (Filter, error) {
	obj, err := object("params", raw)
	if err != nil || obj == nil {
		return Filter{}, err
	}
	inner, ok := obj["filter"]
	if !ok || firstByte(inner) != '{' {
		return decodeFilter(obj)
	}
	fobj, err := object("filter", inner)
	if err != nil {
		return Filter{}, err
	}
	f, err := decodeFilter(fobj)
	if err != nil {
		return Filter{}, err
	}
	if k, ok := obj["kind"]; ok {
		if f.ScopeKinds, err = stringList("kind", k); err != nil {
			return Filter{}, err
		}
	}
	return f, nil
}

func decodeFilter(obj map[string]json.RawMessage) (Filter, error) {
	var f Filter
	var err error
	lists := []struct {
		key string
		dst *[]string
	}{{"kind", &f.Kind}, {"assignee", &f.Assignee}, {"labels_any", &f.LabelsAny}, {"labels_all", &f.LabelsAll}}
	for _, l := range lists {
		if *l.dst, err = stringList(l.key, obj[l.key]); err != nil {
			return f, err
		}
	}
	statuses, err := stringList("status", obj["status"])
	if err != nil {
		return f, err
	}
	for _, s := range statuses {
		st, err := ParseStatus("status", s)
		if err != nil {
			return f, err
		}
		f.Status = append(f.Status, st)
	}
	strs := []struct {
		key string
		dst **string
	}{{"native_status", &f.NativeStatus}, {"dispatch_label", &f.DispatchLabel}, {"has_attachment_kind", &f.HasAttachmentKind}}
	for _, s := range strs {
		if *s.dst, err = optString(s.key, obj[s.key]); err != nil {
			return f, err
		}
	}
	since, err := optString("updated_since", obj["updated_since"])
	if err != nil {
		return f, err
	}
	if since != nil {
		t, err := ParseTime("updated_since", *since)
		if err != nil {
			return f, err
		}
		f.UpdatedSince = &t
	}
	cursor, err := optString("cursor", obj["cursor"])
	if err != nil {
		return f, err
	}
	if cursor != nil {
		f.Cursor = *cursor
	}
	if f.Limit, err = optLimit(obj["limit"]); err != nil {
		return f, err
	}
	return f, nil
}

func optLimit(raw json.RawMessage) (int, error) {
	if rustjson.IsNull(raw) {
		return 0, nil
	}
	n, err := strconv.ParseUint(string(bytes.TrimSpace(raw)), 10, 32)
	if err != nil {
		return 0, inputErr("limit", "invalid limit %s: want an integer from 0 to 4294967295", raw)
	}
	return int(n), nil
}

// Match reports whether s satisfies f (kinds included; cursor and limit
// are paging, not predicates). It is the Go twin of the store's SQL WHERE
// clause, and the store's tests hold the two to the same answers.
func (f *Filter) Match(s *Subject, hints Hints) bool {
	switch {
	case len(f.Kind) > 0 && !slices.Contains(f.Kind, s.Kind),
		len(f.ScopeKinds) > 0 && !slices.Contains(f.ScopeKinds, s.Kind),
		len(f.Status) > 0 && !slices.Contains(f.Status, s.Status),
		len(f.Assignee) > 0 && (s.Assignee == nil || !slices.Contains(f.Assignee, *s.Assignee)),
		len(f.LabelsAny) > 0 && !slices.ContainsFunc(f.LabelsAny, s.HasLabel),
		len(f.LabelsAll) > 0 && slices.ContainsFunc(f.LabelsAll, func(l string) bool { return !s.HasLabel(l) }),
		f.UpdatedSince != nil && s.UpdatedAt.Before(*f.UpdatedSince),
		f.NativeStatus != nil && (s.NativeStatus == nil || *s.NativeStatus != *f.NativeStatus):
		return false
	}
	if f.DispatchLabel != nil {
		if l := hints.Label(s.NativeStatus); l == nil || *l != *f.DispatchLabel {
			return false
		}
	}
	if f.HasAttachmentKind != nil {
		return slices.ContainsFunc(s.Attachments, func(a Attachment) bool { return a.Kind == *f.HasAttachmentKind })
	}
	return true
}

// object decodes a JSON object into its raw members; null or absent
// yields nil.
func object(field string, raw json.RawMessage) (map[string]json.RawMessage, error) {
	if rustjson.IsNull(raw) {
		return nil, nil
	}
	if firstByte(raw) != '{' {
		return nil, inputErr(field, "invalid %s: expected an object, got %s", field, clip(raw))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, inputErr(field, "invalid %s: %v", field, err)
	}
	return obj, nil
}

// stringList accepts an array of strings or a single string; null or
// absent is empty.
func stringList(field string, raw json.RawMessage) ([]string, error) {
	if rustjson.IsNull(raw) {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, inputErr(field, "invalid %s: expected a string or an array of strings, got %s", field, clip(raw))
	}
	return many, nil
}

// optString accepts a string; null or absent is nil.
func optString(field string, raw json.RawMessage) (*string, error) {
	if rustjson.IsNull(raw) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, inputErr(field, "invalid %s: expected a string, got %s", field, clip(raw))
	}
	return &s, nil
}

func firstByte(raw []byte) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// clip keeps error messages short when a caller sends a huge value.
func clip(raw []byte) string {
	if len(raw) > 80 {
		return string(raw[:80]) + "…"
	}
	return string(raw)
}

// Fields decodes request params as an object of raw members (null or
// absent: nil). Handlers use it for the small {id, …} shapes.
func Fields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	return object("params", raw)
}

// StringField reads an optional string member.
func StringField(obj map[string]json.RawMessage, key string) (*string, error) {
	return optString(key, obj[key])
}
