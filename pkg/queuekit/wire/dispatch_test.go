package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDispatchCanonical(t *testing.T) {
	tests := []struct{ name, in, out string }{
		{"minimal",
			`{"subject":{"Task":{"id":"TASK-7"}},"workflow_ref":"standard","trigger_source":"manual-queue-enqueue","requested_at":"2026-06-14T12:00:00.123456Z"}`,
			`{"requested_at":"2026-06-14T12:00:00.123456Z","subject":{"Task":{"id":"TASK-7"}},"trigger_source":"manual-queue-enqueue","workflow_ref":"standard"}`},
		{"everything, sorted, unknown fields dropped, offset normalised",
			`{"workflow_ref":"w","vars":{"z":"1","branch":"feat/x","task_generation":"7"},"unknown":1,"priority":"high","input":{"b":[1,{"d":1,"c":2}],"a":"x"},"trigger_source":"trigger:slack","requested_at":"2026-06-14T14:00:00+02:00","subject":{"kind":"linear.issue","id":"ENG-7"}}`,
			`{"input":{"a":"x","b":[1,{"c":2,"d":1}]},"priority":"high","requested_at":"2026-06-14T12:00:00Z","subject":{"id":"ENG-7","kind":"linear.issue"},"trigger_source":"trigger:slack","vars":{"branch":"feat/x","task_generation":"7","z":"1"},"workflow_ref":"w"}`},
		{"null optionals and empty vars omitted",
			`{"subject":{"Task":{"id":"T"}},"workflow_ref":"w","trigger_source":"t","requested_at":"2030-01-01T00:00:00Z","input":null,"priority":null,"vars":{}}`,
			`{"requested_at":"2030-01-01T00:00:00Z","subject":{"Task":{"id":"T"}},"trigger_source":"t","workflow_ref":"w"}`},
		{"scalar input kept",
			`{"subject":{"Task":{"id":"T"}},"workflow_ref":"w","trigger_source":"t","requested_at":"2030-01-01T00:00:00Z","input":1.50}`,
			`{"input":1.50,"requested_at":"2030-01-01T00:00:00Z","subject":{"Task":{"id":"T"}},"trigger_source":"t","workflow_ref":"w"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DecodeDispatch(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			out, err := d.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.out {
				t.Errorf("encoded\n %s\nwant\n %s", out, tt.out)
			}
			// Canonical output is a fixed point.
			d2, err := DecodeDispatch(out)
			if err != nil {
				t.Fatal(err)
			}
			if out2, _ := d2.Encode(); string(out2) != string(out) {
				t.Errorf("not a fixed point: %s then %s", out, out2)
			}
		})
	}
}

func TestDispatchErrors(t *testing.T) {
	valid := map[string]string{
		"subject": `{"Task":{"id":"T"}}`, "workflow_ref": `"w"`, "trigger_source": `"t"`, "requested_at": `"2030-01-01T00:00:00Z"`,
	}
	build := func(change map[string]string) string {
		parts := []string{}
		for k, v := range valid {
			if nv, ok := change[k]; ok {
				if nv == "" {
					continue
				}
				v = nv
			}
			parts = append(parts, `"`+k+`":`+v)
		}
		for k, v := range change {
			if _, ok := valid[k]; !ok {
				parts = append(parts, `"`+k+`":`+v)
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	tests := []struct {
		name   string
		change map[string]string
		want   string
	}{
		{"bad actor", map[string]string{"actor": `{"claims":["a"]}`}, "actor: missing field `user_id`"},
		{"missing workflow_ref", map[string]string{"workflow_ref": ""}, "missing field `workflow_ref`"},
		{"null workflow_ref", map[string]string{"workflow_ref": "null"}, "invalid type for `workflow_ref`: null"},
		{"missing trigger_source", map[string]string{"trigger_source": ""}, "missing field `trigger_source`"},
		{"missing requested_at", map[string]string{"requested_at": ""}, "missing field `requested_at`"},
		{"bad requested_at", map[string]string{"requested_at": `"yesterday"`}, "invalid value for `requested_at`"},
		{"non-string var", map[string]string{"vars": `{"a":"x","n":5}`}, "invalid type for `vars.n`: number"},
		{"vars not an object", map[string]string{"vars": `["a"]`}, "invalid type for `vars`: array"},
		{"priority not a string", map[string]string{"priority": `3`}, "invalid type for `priority`: number"},
		{"bad subject", map[string]string{"subject": `{"Task":{}}`}, "untagged enum SubjectRef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeDispatch(json.RawMessage(build(tt.change)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := DecodeDispatch(json.RawMessage(`"x"`)); err == nil || !strings.Contains(err.Error(), "expected struct SubjectDispatch") {
		t.Errorf("a string dispatch: %v", err)
	}
}

// 0.7: a dispatch may have no subject, and an actor is kept canonically.
func TestDispatchV07Fields(t *testing.T) {
	in := `{"actor":{"user_id":"u1","tenant_id":"t","claims":["admin"],"extra":1},"requested_at":"2026-06-14T11:00:00+02:00","trigger_source":"s","workflow_ref":"w"}`
	d, err := DecodeDispatch(json.RawMessage(in))
	if err != nil || d.Subject != nil {
		t.Fatalf("decode: %+v, %v", d, err)
	}
	out, err := d.Encode()
	want := `{"actor":{"claims":["admin"],"tenant_id":"t","user_id":"u1"},"requested_at":"2026-06-14T09:00:00Z","trigger_source":"s","workflow_ref":"w"}`
	if err != nil || string(out) != want {
		t.Errorf("encode\n got %s\nwant %s", out, want)
	}
}
