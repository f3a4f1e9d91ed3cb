package wire

import (
	"encoding/json"
	"testing"
)

// The canonical id table of queue-v2.md §3.2.
func TestCanonicalID(t *testing.T) {
	tests := []struct{ subject, want string }{
		{`{"Task":{"id":"TASK-1"}}`, "task:TASK-1"},
		{`{"Task":{"id":"task:TASK-1216"}}`, "task:TASK-1216"},
		{`{"Task":{"id":"TASK:X"}}`, "task:X"},
		{`{"kind":"task","id":"TASK-LEGACY"}`, "task:TASK-LEGACY"},
		{`{"kind":"trigger_event","id":"github-delivery-1177"}`, "trigger_event:github-delivery-1177"},
		{`{"Custom":{"title":"T","description":"d"}}`, "custom:T"},
		{`{"Requirement":{"id":" REQ-1 "}}`, "requirement:REQ-1"},
		{`{"kind":"Linear.Issue","id":"ENG-7"}`, "Linear.Issue:ENG-7"},
		{`{"Task":{"id":" "}}`, ""},
		{`{"Task":{"id":"task:"}}`, ""},
		{`{"kind":" ","id":"x"}`, ""},
	}
	for _, tt := range tests {
		s, err := decodeSubject(json.RawMessage(tt.subject))
		if err != nil {
			t.Fatalf("%s: %v", tt.subject, err)
		}
		got, err := s.CanonicalID()
		if got != tt.want || (tt.want == "") != (err != nil) {
			t.Errorf("%s: %q, %v; want %q", tt.subject, got, err, tt.want)
		}
	}
}
