package conformance

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// The queue-v2 suite's verdicts rest on the daemon's fence rules (pinned
// in e2e/internal/queuev2) and on the schema check of every v2 result,
// pinned here without a plugin, so a lenient check cannot hide behind a
// passing plugin.

func TestValidateQueueResult(t *testing.T) {
	set, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	fence := `{"schema":"animus.execution-fence.v1","version":1,"workflow_id":"wf-1","workflow_generation":1,` +
		`"subject":{"qualified_id":"task:TASK-1","generation":1},` +
		`"queue_lease":{"entry_id":"e-1","owner_id":"daemon-a","generation":1,"expires_at":"2026-10-01T12:30:00.123456789Z"},` +
		`"repository":{"repository":"acme/app","base_ref":"refs/heads/main","head_ref":"refs/heads/animus/TASK-1"}}`
	entry := `{"entry_id":"e-1","subject_id":"task:TASK-1","status":"assigned","enqueued_at":"x","workflow_id":"wf-1",` +
		`"subject_dispatch":{"requested_at":"2026-10-01T12:00:00Z","subject":{"Task":{"id":"TASK-1"}},"trigger_source":"t","workflow_ref":"standard"}}`
	for _, c := range []struct {
		method, result string
		ok             bool
	}{
		{"queue/v2/lease/renew", `{"outcome":"applied","execution":` + fence + `}`, true},
		{"queue/v2/lease/renew", `{"outcome":"applied","execution":` + fence + `,"extra":1}`, false},
		{"queue/v2/completion", `{"outcome":"done"}`, false},
		{"queue/v2/enqueue", `{"enqueued":true,"entry_id":"e-1","subject":{"qualified_id":"task:TASK-1","generation":1}}`, true},
		{"queue/v2/enqueue", `{"enqueued":true,"entry_id":"e-1","subject":{"qualified_id":"task:TASK-1","generation":1,"x":0}}`, false},
		{"queue/v2/lease", `{"leased":[{"entry":` + entry + `,"execution":` + fence + `}]}`, true},
		{"queue/v2/lease", `{"leased":[],"blocked":[{"entry_id":"e-2","reason":"busy"}]}`, false},
	} {
		err := validateQueueResult(set, c.method, []byte(c.result))
		if (err == nil) != c.ok {
			t.Errorf("%s %s: %v, want ok=%v", c.method, c.result, err, c.ok)
		}
	}
}
