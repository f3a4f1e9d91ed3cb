package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

const dispatchJSON = `{"subject":{"Task":{"id":"T"}},"workflow_ref":"w","trigger_source":"t","requested_at":"2030-01-01T00:00:00Z"}`

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		decode func(json.RawMessage) error
		in     string
		want   string // "" = success
	}{
		{"enqueue ok", enq, `{"subject_dispatch":` + dispatchJSON + `,"run_at":null,"expire_after_secs":18446744073709551615}`, ""},
		{"enqueue missing dispatch", enq, `{}`, "missing field `subject_dispatch`"},
		{"enqueue dispatch error is prefixed", enq, `{"subject_dispatch":{}}`, "subject_dispatch: missing field `subject`"},
		{"enqueue negative expiry", enq, `{"subject_dispatch":` + dispatchJSON + `,"expire_after_secs":-1}`, "invalid type for `expire_after_secs`"},
		{"enqueue expiry beyond u64", enq, `{"subject_dispatch":` + dispatchJSON + `,"expire_after_secs":18446744073709551616}`, "expire_after_secs"},
		{"enqueue fractional expiry", enq, `{"subject_dispatch":` + dispatchJSON + `,"expire_after_secs":1.5}`, "expire_after_secs"},
		{"enqueue run_at not a string", enq, `{"subject_dispatch":` + dispatchJSON + `,"run_at":5}`, "invalid type for `run_at`"},
		{"params not an object", enq, `[1]`, "invalid type: array, expected struct QueueEnqueueRequest"},
		{"lease ok", lease, `{"max":2,"workflow_ids":["a","b"],"exclude_subjects":["T"]}`, ""},
		{"lease missing max", lease, `{"workflow_ids":[]}`, "missing field `max`"},
		{"lease null max", lease, `{"max":null}`, "invalid type for `max`: null"},
		{"lease negative max", lease, `{"max":-1}`, "invalid type for `max`"},
		{"lease null workflow id", lease, `{"max":1,"workflow_ids":[null]}`, "invalid type for `workflow_ids[0]`: null"},
		{"lease exclude not array", lease, `{"max":1,"exclude_subjects":"T"}`, "invalid type for `exclude_subjects`: string"},
		{"keys are case-sensitive", lease, `{"MAX":1}`, "missing field `max`"},
		{"list status not array", list, `{"status":"pending"}`, "invalid type for `status`"},
		{"list null status is empty", list, `{"status":null,"limit":null}`, ""},
		{"list ok", list, `{"status":["held"],"limit":0,"offset":3}`, ""},
		{"release_pending missing reason", relp, `{"entry_id":"e"}`, "missing field `reason`"},
		{"release_pending missing id", relp, `{"reason":"r"}`, "missing field `entry_id`"},
		{"completion missing status", compl, `{"entry_id":"e"}`, "missing field `status`"},
		{"completion ok", compl, `{"entry_id":"e","status":"anything","workflow_ref":null}`, ""},
		{"reorder missing ids", reorder, `{}`, "missing field `entry_ids`"},
		{"reorder ids wrong type", reorder, `{"entry_ids":[1]}`, "entry_ids[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.decode(json.RawMessage(tt.in))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func enq(raw json.RawMessage) error   { _, err := DecodeEnqueue(raw); return err }
func lease(raw json.RawMessage) error { _, err := DecodeLease(raw); return err }
func list(raw json.RawMessage) error  { _, err := DecodeList(raw); return err }
func relp(raw json.RawMessage) error  { _, err := DecodeReleasePending(raw); return err }
func compl(raw json.RawMessage) error { _, err := DecodeCompletion(raw); return err }
func reorder(raw json.RawMessage) error {
	_, err := DecodeReorder(raw)
	return err
}

func TestDecodeValues(t *testing.T) {
	r, err := DecodeEnqueue(json.RawMessage(`{"subject_dispatch":` + dispatchJSON + `,"run_at":"soon","expire_after_secs":18446744073709551615}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.RunAt == nil || *r.RunAt != "soon" || r.ExpireAfterSecs == nil || *r.ExpireAfterSecs != 1<<64-1 {
		t.Errorf("enqueue decoded %+v", r)
	}
	l, err := DecodeLease(json.RawMessage(`{"max":3}`))
	if err != nil || l.Max != 3 || l.WorkflowIDs != nil || l.ExcludeSubjects != nil {
		t.Errorf("lease without ids: %+v %v", l, err)
	}
	l, err = DecodeLease(json.RawMessage(`{"max":0,"workflow_ids":[]}`))
	if err != nil || l.WorkflowIDs == nil || len(l.WorkflowIDs) != 0 {
		t.Errorf("lease with an empty id list must keep it (len 0 == max 0): %+v %v", l, err)
	}
	li, err := DecodeList(nil)
	if err != nil || li.Limit != nil || li.Offset != 0 || li.Status != nil {
		t.Errorf("absent list params: %+v %v", li, err)
	}
	h, err := DecodeEntry(json.RawMessage(`{"entry_id":"e","reason":"r"}`), "QueueHoldRequest")
	if err != nil || h.EntryID != "e" || h.Reason == nil || *h.Reason != "r" {
		t.Errorf("hold: %+v %v", h, err)
	}
}
