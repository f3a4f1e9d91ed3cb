package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

func TestSubjectRoundTrip(t *testing.T) {
	tests := []struct {
		name, in, out, key string
		taskID             string // "" = none
	}{
		{"legacy task", `{"Task":{"id":"TASK-1"}}`, `{"Task":{"id":"TASK-1"}}`, "TASK-1", "TASK-1"},
		{"legacy task ignores inner unknown fields", `{"Task":{"id":"TASK-1","x":1}}`, `{"Task":{"id":"TASK-1"}}`, "TASK-1", "TASK-1"},
		{"legacy requirement", `{"Requirement":{"id":"REQ-1"}}`, `{"Requirement":{"id":"REQ-1"}}`, "REQ-1", ""},
		{"legacy custom", `{"Custom":{"title":"Nightly","description":"d"}}`, `{"Custom":{"description":"d","title":"Nightly"}}`, "Nightly", ""},
		{"generic built-in goes out legacy", `{"kind":"animus.task","id":"TASK-2","title":"dropped"}`, `{"Task":{"id":"TASK-2"}}`, "TASK-2", "TASK-2"},
		{"built-in kinds compare case-insensitively", `{"kind":"ANIMUS.TASK","id":"TASK-3"}`, `{"Task":{"id":"TASK-3"}}`, "TASK-3", "TASK-3"},
		{"generic custom: id becomes the title", `{"kind":"custom","id":"c-1"}`, `{"Custom":{"description":"","title":"c-1"}}`, "c-1", ""},
		{"generic kind", `{"title":"Fix","kind":"linear.issue","id":"ENG-7"}`, `{"id":"ENG-7","kind":"linear.issue","title":"Fix"}`, "linear.issue::ENG-7", ""},
		{"bare task is a generic kind", `{"kind":"task","id":"X"}`, `{"id":"X","kind":"task"}`, "task::X", ""},
		{"labels keep the generic form", `{"kind":"animus.task","id":"T","labels":["a"]}`, `{"id":"T","kind":"animus.task","labels":["a"]}`, "T", "T"},
		{"metadata sorted, kept", `{"kind":"gh","id":"1","metadata":{"z":1.0,"a":{"c":null,"b":[1,2]}}}`, `{"id":"1","kind":"gh","metadata":{"a":{"b":[1,2],"c":null},"z":1.0}}`, "gh::1", ""},
		{"empty metadata and null fields omitted", `{"kind":"animus.requirement","id":"R","metadata":{},"labels":null,"title":null}`, `{"Requirement":{"id":"R"}}`, "R", ""},
		{"two keys is not legacy", `{"Task":{"id":"T"},"kind":"k","id":"i"}`, `{"id":"i","kind":"k"}`, "k::i", ""},
		{"no HTML escaping", `{"kind":"k","id":"<a&b>"}`, `{"id":"<a&b>","kind":"k"}`, "k::<a&b>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := decodeSubject(json.RawMessage(tt.in))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			// rustjson.Marshal is what the plugin's responses use: no HTML escaping.
			out, err := rustjson.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.out {
				t.Errorf("encoded %s, want %s", out, tt.out)
			}
			if s.Key() != tt.key {
				t.Errorf("key %q, want %q", s.Key(), tt.key)
			}
			if id, ok := s.TaskID(); id != tt.taskID || ok != (tt.taskID != "") {
				t.Errorf("task id %q/%v, want %q", id, ok, tt.taskID)
			}
			// What goes out decodes to the same key again.
			again, err := decodeSubject(out)
			if err != nil || again.Key() != tt.key {
				t.Errorf("re-decode of %s: key %q, %v", out, again.Key(), err)
			}
		})
	}
}

func TestSubjectRejects(t *testing.T) {
	for _, in := range []string{
		`"TASK-1"`, `[]`, `null`, `{}`,
		`{"Task":{}}`, `{"Task":{"id":5}}`, `{"Custom":{"title":"t"}}`,
		`{"kind":"k"}`, `{"id":"i"}`, `{"kind":"k","id":"i","labels":[1]}`, `{"kind":"k","id":"i","title":5}`,
		`{"task":{"id":"T"}}`, // tags are case-sensitive
	} {
		_, err := decodeSubject(json.RawMessage(in))
		if err == nil || !strings.Contains(err.Error(), "untagged enum SubjectRef") {
			t.Errorf("decodeSubject(%s) = %v, want an untagged-enum error", in, err)
		}
	}
}
