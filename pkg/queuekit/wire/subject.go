package wire

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// The built-in subject kinds, compared ASCII case-insensitively.
const (
	KindTask        = "animus.task"
	KindRequirement = "animus.requirement"
	KindCustom      = "custom"
)

// SubjectRef is animus-subject-protocol's SubjectRef in its logical form.
// On the wire it has two shapes (queue.md §2.2): the legacy externally
// tagged enum ({"Task":{"id":…}}, {"Requirement":{"id":…}},
// {"Custom":{"title":…,"description":…}}) and the generic flat struct.
type SubjectRef struct {
	Kind        string
	ID          string
	Title       *string
	Description *string
	Labels      []string
	// Metadata is canonical JSON; nil stands for both null and {} (the two
	// are indistinguishable on output).
	Metadata json.RawMessage
}

// Key is SubjectDispatch.subject_key(): the bare id for the built-in kinds,
// "<kind>::<id>" (kind verbatim) for every other kind.
func (s SubjectRef) Key() string {
	if builtin(s.Kind) {
		return s.ID
	}
	return s.Kind + "::" + s.ID
}

// TaskID is the id when the kind is animus.task.
func (s SubjectRef) TaskID() (string, bool) {
	if strings.EqualFold(s.Kind, KindTask) {
		return s.ID, true
	}
	return "", false
}

// TaskIDV2 is QueueEntry.task_id under queue 0.4.0: the raw id when the
// kind is animus.task or task (ASCII case-insensitive).
func (s SubjectRef) TaskIDV2() (string, bool) {
	if strings.EqualFold(s.Kind, "task") {
		return s.ID, true
	}
	return s.TaskID()
}

func builtin(kind string) bool {
	return strings.EqualFold(kind, KindTask) || strings.EqualFold(kind, KindRequirement) || strings.EqualFold(kind, KindCustom)
}

// decodeSubject reads either wire form. Like serde's untagged enum it tries
// the legacy form first and falls back to the generic one.
func decodeSubject(raw json.RawMessage) (SubjectRef, error) {
	if s, ok := decodeLegacySubject(raw); ok {
		return s, nil
	}
	s, err := decodeGenericSubject(raw)
	if err != nil {
		return SubjectRef{}, fmt.Errorf("data did not match any variant of untagged enum SubjectRef (%v)", err)
	}
	return s, nil
}

// decodeLegacySubject accepts an object with exactly one key, Task,
// Requirement or Custom, whose inner fields decode (unknown inner fields are
// ignored).
func decodeLegacySubject(raw json.RawMessage) (SubjectRef, bool) {
	o, err := parseObject(raw, "enum SubjectRef")
	if err != nil || len(o) != 1 {
		return SubjectRef{}, false
	}
	for tag, inner := range o {
		in, err := parseObject(inner, "struct variant")
		if err != nil {
			return SubjectRef{}, false
		}
		switch tag {
		case "Task", "Requirement":
			id, err := in.reqString("id")
			if err != nil {
				return SubjectRef{}, false
			}
			kind := KindTask
			if tag == "Requirement" {
				kind = KindRequirement
			}
			return SubjectRef{Kind: kind, ID: id}, true
		case "Custom":
			title, err1 := in.reqString("title")
			desc, err2 := in.reqString("description")
			if err1 != nil || err2 != nil {
				return SubjectRef{}, false
			}
			// The legacy Custom form has no id: the title stands in for it.
			return SubjectRef{Kind: KindCustom, ID: title, Title: &title, Description: &desc}, true
		}
	}
	return SubjectRef{}, false
}

func decodeGenericSubject(raw json.RawMessage) (SubjectRef, error) {
	o, err := parseObject(raw, "struct SubjectRef")
	if err != nil {
		return SubjectRef{}, err
	}
	var s SubjectRef
	if s.Kind, err = o.reqString("kind"); err != nil {
		return SubjectRef{}, err
	}
	if s.ID, err = o.reqString("id"); err != nil {
		return SubjectRef{}, err
	}
	if s.Title, err = o.optString("title"); err != nil {
		return SubjectRef{}, err
	}
	if s.Description, err = o.optString("description"); err != nil {
		return SubjectRef{}, err
	}
	if s.Labels, _, err = o.optStrings("labels"); err != nil {
		return SubjectRef{}, err
	}
	if s.Metadata, err = rustjson.Canonical(o.get("metadata")); err != nil {
		return SubjectRef{}, err
	}
	if string(s.Metadata) == "{}" {
		s.Metadata = nil
	}
	return s, nil
}

// genericSubject is the flat form on output: keys sorted, optional fields
// omitted at their defaults.
type genericSubject struct {
	Description *string         `json:"description,omitempty"`
	ID          string          `json:"id"`
	Kind        string          `json:"kind"`
	Labels      []string        `json:"labels,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	Title       *string         `json:"title,omitempty"`
}

type idOnly struct {
	ID string `json:"id"`
}

type customBody struct {
	Description string `json:"description"`
	Title       string `json:"title"`
}

// MarshalJSON applies the references' output rule: a built-in kind with no
// labels and no metadata goes out in the legacy form, everything else in the
// generic form.
func (s SubjectRef) MarshalJSON() ([]byte, error) {
	if len(s.Labels) == 0 && s.Metadata == nil {
		switch {
		case strings.EqualFold(s.Kind, KindTask):
			return rustjson.Marshal(map[string]idOnly{"Task": {s.ID}})
		case strings.EqualFold(s.Kind, KindRequirement):
			return rustjson.Marshal(map[string]idOnly{"Requirement": {s.ID}})
		case strings.EqualFold(s.Kind, KindCustom):
			body := customBody{Title: s.ID}
			if s.Title != nil {
				body.Title = *s.Title
			}
			if s.Description != nil {
				body.Description = *s.Description
			}
			return rustjson.Marshal(map[string]customBody{"Custom": body})
		}
	}
	return rustjson.Marshal(genericSubject{
		Description: s.Description, ID: s.ID, Kind: s.Kind,
		Labels: s.Labels, Metadata: s.Metadata, Title: s.Title,
	})
}
