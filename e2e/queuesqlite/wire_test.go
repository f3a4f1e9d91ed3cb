package queuesqlite

import (
	"regexp"
	"strings"
	"testing"
)

// Byte-level rules of the references (queue.md §1.6, §1.7, §6): sorted keys
// inside result and error.data, chrono timestamps with +00:00 (requested_at
// with Z), optional fields omitted, not_found always present, UUID v4 ids.
const (
	uuid = `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`
	ts   = `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{3}|\.\d{6}|\.\d{9})?\+00:00`
)

func TestWireBytes(t *testing.T) {
	p := newProject(t)
	p.quiet = true
	frame := func(method string, params any) string {
		t.Helper()
		return string(p.call(method, params).Raw)
	}
	tests := []struct {
		name, method string
		params       any
		pattern      string
	}{
		{"enqueue", "queue/enqueue", dispatch("TASK-7"),
			`{"jsonrpc":"2.0","id":2,"result":{"enqueued":true,"entry_id":"` + uuid + `","subject_id":"TASK-7"}}`},
		{"duplicate enqueue", "queue/enqueue", raw(`{"subject_dispatch":{"workflow_ref":"standard","vars":{"z":"1","a":"<&>"},"trigger_source":"t","subject":{"Task":{"id":"TASK-7"}},"requested_at":"2026-06-14T14:00:00.1+02:00"},"run_at":"2099-01-01T00:00:00+02:00","expire_after_secs":18446744073709551615}`),
			`{"jsonrpc":"2.0","id":2,"result":{"enqueued":true,"entry_id":"` + uuid + `","subject_id":"TASK-7","warning":"subject TASK-7 already has 1 queued entry; duplicate enqueued"}}`},
		{"list", "queue/list", raw(`{}`),
			`{"jsonrpc":"2.0","id":2,"result":{"entries":\[` +
				`{"enqueued_at":"` + ts + `","entry_id":"` + uuid + `","status":"pending","subject_dispatch":{"requested_at":"2026-06-14T12:00:00.123456Z","subject":{"Task":{"id":"TASK-7"}},"trigger_source":"manual-queue-enqueue","workflow_ref":"standard"},"subject_id":"TASK-7","task_id":"TASK-7"},` +
				`{"enqueued_at":"` + ts + `","entry_id":"` + uuid + `","expire_after_secs":18446744073709551615,"run_at":"2099-01-01T00:00:00\+02:00","status":"pending","subject_dispatch":{"requested_at":"2026-06-14T12:00:00.100Z","subject":{"Task":{"id":"TASK-7"}},"trigger_source":"t","vars":{"a":"<&>","z":"1"},"workflow_ref":"standard"},"subject_id":"TASK-7","task_id":"TASK-7"}` +
				`\],"stats":{"assigned":0,"deferred":1,"held":0,"pending":2,"total":2},"total":2}}`},
		{"next_deadline", "queue/next_deadline", raw(`{}`), `{"jsonrpc":"2.0","id":2,"result":{"next_run_at":"2098-12-31T22:00:00\+00:00"}}`},
		// One entry per subject per batch: the second TASK-7 stays pending.
		{"lease", "queue/lease", raw(`{"exclude_subjects":["TASK-8"],"max":2,"workflow_ids":["wf-a","wf-b"]}`),
			`{"jsonrpc":"2.0","id":2,"result":{"leased":\[{"assigned_at":"` + ts + `","enqueued_at":"` + ts + `","entry_id":"` + uuid +
				`","status":"assigned","subject_dispatch":{"requested_at":"2026-06-14T12:00:00.123456Z","subject":{"Task":{"id":"TASK-7"}},"trigger_source":"manual-queue-enqueue","workflow_ref":"standard"},"subject_id":"TASK-7","task_id":"TASK-7","workflow_id":"wf-a"}\]}}`},
		{"not found", "queue/hold", raw(`{"entry_id":"nope"}`), `{"jsonrpc":"2.0","id":2,"result":{"changed":false,"not_found":true}}`},
		{"count mismatch", "queue/lease", raw(`{"max":2,"workflow_ids":["a"]}`),
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32206,"message":"workflow_ids.len\(\)=1 did not match max=2","data":{"actual":1,"category":"invalid_request","expected":2}}}`},
		{"release_pending not found", "queue/release_pending", raw(`{"entry_id":"nope","reason":"r"}`),
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"entry_id not found: nope","data":{"category":"not_found"}}}`},
		{"stats", "queue/stats", raw(`{}`), `{"jsonrpc":"2.0","id":2,"result":{"assigned":1,"deferred":1,"held":0,"pending":1,"total":2}}`},
	}
	for _, tt := range tests {
		got := strings.TrimSuffix(frame(tt.method, tt.params), "\n")
		if !regexp.MustCompile(`^` + tt.pattern + `$`).MatchString(got) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.pattern)
		}
	}
}

// TestDaemonScript replays queue.md §5.6: the daemon's tick, its
// within-batch release, the reconciler's list and completion, each in its
// own process, with stderr quiet throughout.
func TestDaemonScript(t *testing.T) {
	p := newProject(t)
	p.quiet = true
	e1 := entryID(t, p.result("queue/enqueue", dispatch("TASK-7")))
	e2 := entryID(t, p.result("queue/enqueue", dispatch("TASK-9")))
	leased := p.result("queue/lease", raw(`{"exclude_subjects":["TASK-8"],"max":2,"workflow_ids":["uuid-a","uuid-b"]}`))
	if !strings.Contains(leased, `"entry_id":"`+e1+`"`) || !strings.Contains(leased, `"workflow_id":"uuid-b"`) {
		t.Fatalf("lease: %s", leased)
	}
	if got := p.result("queue/release_pending", raw(`{"entry_id":"`+e2+`","reason":"within-batch-duplicate-subject"}`)); got != `{"entry_id":"`+e2+`","status":"pending"}` {
		t.Errorf("release_pending: %s", got)
	}
	list := p.result("queue/list", raw(`{"status":["assigned"]}`))
	if strings.Count(list, `"entry_id"`) != 1 || !strings.Contains(list, e1) {
		t.Errorf("assigned list: %s", list)
	}
	if got := p.result("queue/completion", raw(`{"entry_id":"`+e1+`","status":"completed","workflow_ref":"standard"}`)); got != `{"changed":true,"not_found":false}` {
		t.Errorf("completion: %s", got)
	}
	if got := p.result("health/check", nil); !strings.Contains(got, `"status":"healthy"`) {
		t.Errorf("bound health/check: %s", got)
	}
}
