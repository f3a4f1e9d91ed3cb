package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

const dispatchJSON = `{"subject":{"Task":{"id":"T"}},"workflow_ref":"w","trigger_source":"t","requested_at":"2030-01-01T00:00:00Z"}`

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		params pluginkit.ParamsDecoder
		in     string
		want   string // "" = success
	}{
		{"enqueue ok", new(EnqueueRequest), `{"subject_dispatch":` + dispatchJSON + `,"run_at":null,"expire_after_secs":18446744073709551615}`, ""},
		{"enqueue missing dispatch", new(EnqueueRequest), `{}`, "missing field `subject_dispatch`"},
		{"enqueue dispatch error is prefixed", new(EnqueueRequest), `{"subject_dispatch":{}}`, "subject_dispatch: missing field `subject`"},
		{"enqueue negative expiry", new(EnqueueRequest), `{"subject_dispatch":` + dispatchJSON + `,"expire_after_secs":-1}`, "invalid type for `expire_after_secs`"},
		{"enqueue expiry beyond u64", new(EnqueueRequest), `{"subject_dispatch":` + dispatchJSON + `,"expire_after_secs":18446744073709551616}`, "expire_after_secs"},
		{"enqueue fractional expiry", new(EnqueueRequest), `{"subject_dispatch":` + dispatchJSON + `,"expire_after_secs":1.5}`, "expire_after_secs"},
		{"enqueue run_at not a string", new(EnqueueRequest), `{"subject_dispatch":` + dispatchJSON + `,"run_at":5}`, "invalid type for `run_at`"},
		{"params not an object", new(EnqueueRequest), `[1]`, "invalid type: array, expected struct QueueEnqueueRequest"},
		{"lease ok", new(LeaseRequest), `{"max":2,"workflow_ids":["a","b"],"exclude_subjects":["T"]}`, ""},
		{"lease missing max", new(LeaseRequest), `{"workflow_ids":[]}`, "missing field `max`"},
		{"lease null max", new(LeaseRequest), `{"max":null}`, "invalid type for `max`: null"},
		{"lease negative max", new(LeaseRequest), `{"max":-1}`, "invalid type for `max`"},
		{"lease null workflow id", new(LeaseRequest), `{"max":1,"workflow_ids":[null]}`, "invalid type for `workflow_ids[0]`: null"},
		{"lease exclude not array", new(LeaseRequest), `{"max":1,"exclude_subjects":"T"}`, "invalid type for `exclude_subjects`: string"},
		{"keys are case-sensitive", new(LeaseRequest), `{"MAX":1}`, "missing field `max`"},
		{"list status not array", new(ListRequest), `{"status":"pending"}`, "invalid type for `status`"},
		{"list null status is empty", new(ListRequest), `{"status":null,"limit":null}`, ""},
		{"list ok", new(ListRequest), `{"status":["held"],"limit":0,"offset":3}`, ""},
		{"release_pending missing reason", new(ReleasePendingRequest), `{"entry_id":"e"}`, "missing field `reason`"},
		{"release_pending missing id", new(ReleasePendingRequest), `{"reason":"r"}`, "missing field `entry_id`"},
		{"completion missing status", new(CompletionRequest), `{"entry_id":"e"}`, "missing field `status`"},
		{"completion ok", new(CompletionRequest), `{"entry_id":"e","status":"anything","workflow_ref":null}`, ""},
		{"reorder missing ids", new(ReorderRequest), `{}`, "missing field `entry_ids`"},
		{"reorder ids wrong type", new(ReorderRequest), `{"entry_ids":[1]}`, "entry_ids[0]"},
		// serde names the struct of each entry method.
		{"hold not an object", new(HoldRequest), `[]`, "invalid type: array, expected struct QueueHoldRequest"},
		{"release not an object", new(ReleaseRequest), `"x"`, "invalid type: string, expected struct QueueReleaseRequest"},
		{"drop not an object", new(DropRequest), `1`, "invalid type: number, expected struct QueueDropRequest"},
		{"hold reason not a string", new(HoldRequest), `{"entry_id":"e","reason":1}`, "invalid type for `reason`: number"},
		{"mark_assigned workflow_id not a string", new(MarkAssignedRequest), `{"entry_id":"e","workflow_id":[]}`, "invalid type for `workflow_id`: array"},
		{"list not an object", new(ListRequest), `[]`, "invalid type: array, expected struct QueueListRequest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.params.DecodeParams([]byte(tt.in))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// decode runs P's DecodeParams on a zero P, as pluginkit.Handle does.
func decode[P any, PT interface {
	*P
	pluginkit.ParamsDecoder
}](raw string) (P, error) {
	var p P
	var b []byte
	if raw != "" {
		b = []byte(raw)
	}
	err := PT(&p).DecodeParams(b)
	return p, err
}

func TestDecodeValues(t *testing.T) {
	r, err := decode[EnqueueRequest](`{"subject_dispatch":` + dispatchJSON + `,"run_at":"soon","expire_after_secs":18446744073709551615}`)
	if err != nil {
		t.Fatal(err)
	}
	if r.RunAt == nil || *r.RunAt != "soon" || r.ExpireAfterSecs == nil || *r.ExpireAfterSecs != 1<<64-1 {
		t.Errorf("enqueue decoded %+v", r)
	}
	l, err := decode[LeaseRequest](`{"max":3}`)
	if err != nil || l.Max != 3 || l.WorkflowIDs != nil || l.ExcludeSubjects != nil {
		t.Errorf("lease without ids: %+v %v", l, err)
	}
	l, err = decode[LeaseRequest](`{"max":0,"workflow_ids":[]}`)
	if err != nil || l.WorkflowIDs == nil || len(l.WorkflowIDs) != 0 {
		t.Errorf("lease with an empty id list must keep it (len 0 == max 0): %+v %v", l, err)
	}
	for _, in := range []string{"", "null"} {
		li, err := decode[ListRequest](in)
		if err != nil || li.Limit != nil || li.Offset != 0 || li.Status != nil {
			t.Errorf("list params %q: %+v %v, want the defaults", in, li, err)
		}
	}
	li, err := decode[ListRequest](`{"status":["held"],"limit":0,"offset":3}`)
	if err != nil || len(li.Status) != 1 || li.Limit == nil || *li.Limit != 0 || li.Offset != 3 {
		t.Errorf("list: %+v %v", li, err)
	}
	h, err := decode[HoldRequest](`{"entry_id":"e","reason":"r"}`)
	if err != nil || h.EntryID != "e" || h.Reason == nil || *h.Reason != "r" {
		t.Errorf("hold: %+v %v", h, err)
	}
	ro, err := decode[ReorderRequest](`{"entry_ids":["b","a"]}`)
	if err != nil || strings.Join(ro.EntryIDs, ",") != "b,a" {
		t.Errorf("reorder: %+v %v", ro, err)
	}
}

// Every method but list requires params: none at all is
// pluginkit.ErrMissingParams, which pluginkit words as "missing params for
// <method>".
func TestDecodeMissingParams(t *testing.T) {
	tests := []struct {
		name   string
		params pluginkit.ParamsDecoder
	}{
		{"enqueue", new(EnqueueRequest)},
		{"lease", new(LeaseRequest)},
		{"hold", new(HoldRequest)},
		{"release", new(ReleaseRequest)},
		{"drop", new(DropRequest)},
		{"reorder", new(ReorderRequest)},
		{"mark_assigned", new(MarkAssignedRequest)},
		{"completion", new(CompletionRequest)},
		{"release_pending", new(ReleasePendingRequest)},
	}
	for _, tt := range tests {
		if err := tt.params.DecodeParams(nil); !errors.Is(err, pluginkit.ErrMissingParams) {
			t.Errorf("%s without params: %v, want ErrMissingParams", tt.name, err)
		}
	}
}
