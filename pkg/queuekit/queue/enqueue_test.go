package queue

import (
	"strings"
	"testing"
	"time"
)

const dispatch7 = `{"subject_dispatch":{"requested_at":"2026-06-14T11:00:00Z","subject":{"Task":{"id":"TASK-7"}},"trigger_source":"test","workflow_ref":"standard"}}`

func TestEnqueueAndListWireShape(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.want("queue/enqueue", dispatch7, `{"enqueued":true,"entry_id":"id-1","subject_id":"TASK-7"}`)
	f.want("queue/list", "", `{"entries":[{"enqueued_at":"2026-06-14T12:00:00.123456789+00:00","entry_id":"id-1","status":"pending",`+
		`"subject_dispatch":{"requested_at":"2026-06-14T11:00:00Z","subject":{"Task":{"id":"TASK-7"}},"trigger_source":"test","workflow_ref":"standard"},`+
		`"subject_id":"TASK-7","task_id":"TASK-7"}],"stats":{"assigned":0,"deferred":0,"held":0,"pending":1,"total":1},"total":1}`)
	// A generic subject: subject_id is kind::id, no task_id; the dispatch
	// comes back canonical (sorted keys, vars sorted, unknown fields gone).
	f.want("queue/enqueue", `{"subject_dispatch":{"workflow_ref":"w","subject":{"kind":"linear.issue","id":"ENG-7","title":"Fix"},`+
		`"vars":{"z":"1","a":"2"},"x":1,"trigger_source":"t","requested_at":"2026-06-14T13:00:00.5+01:00"},"run_at":"garbage","expire_after_secs":18446744073709551615}`,
		`{"enqueued":true,"entry_id":"id-2","subject_id":"linear.issue::ENG-7"}`)
	got := string(f.h.OK(t, "queue/list", `{"status":["pending"],"offset":1}`, nil))
	want := `{"entries":[{"enqueued_at":"2026-06-14T12:00:00.123456789+00:00","entry_id":"id-2","expire_after_secs":18446744073709551615,` +
		`"run_at":"garbage","status":"pending","subject_dispatch":{"requested_at":"2026-06-14T12:00:00.500Z",` +
		`"subject":{"id":"ENG-7","kind":"linear.issue","title":"Fix"},"trigger_source":"t","vars":{"a":"2","z":"1"},"workflow_ref":"w"},` +
		`"subject_id":"linear.issue::ENG-7"}],"stats":{"assigned":0,"deferred":0,"held":0,"pending":2,"total":2},"total":2}`
	if got != want {
		t.Errorf("list\n got %s\nwant %s", got, want)
	}
}

func TestEnqueueNeverDedupes(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.want("queue/enqueue", dispatch7, `{"enqueued":true,"entry_id":"id-1","subject_id":"TASK-7"}`)
	f.want("queue/enqueue", dispatch7, `{"enqueued":true,"entry_id":"id-2","subject_id":"TASK-7","warning":"subject TASK-7 already has 1 queued entry; duplicate enqueued"}`)
	f.h.OK(t, "queue/hold", `{"entry_id":"id-1"}`, nil)
	f.h.OK(t, "queue/lease", `{"max":1}`, nil) // assigns id-2 (minted workflow id-3)
	// Held and assigned entries count as live.
	f.want("queue/enqueue", dispatch7, `{"enqueued":true,"entry_id":"id-4","subject_id":"TASK-7","warning":"subject TASK-7 already has 2 queued entries; duplicate enqueued"}`)
	f.enqueue("TASK-8", "")
	if got := f.states(); got != "id-1:held id-2:assigned id-4:pending id-5:pending" {
		t.Errorf("states %s", got)
	}
}

func TestEnqueueInvalidParams(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.wantErr("queue/enqueue", "", -32602, "missing params for queue/enqueue", nil)
	f.wantErr("queue/enqueue", `{}`, -32602, "invalid queue/enqueue params: missing field `subject_dispatch`", map[string]any{"category": "invalid_request"})
	f.wantErr("queue/enqueue", `{"subject_dispatch":{"requested_at":"2026-06-14T11:00:00Z","subject":{"Task":{"id":"T"}},"trigger_source":"t","workflow_ref":"w","vars":{"n":1}}}`,
		-32602, "invalid type for `vars.n`", nil)
	if got := f.states(); got != "" {
		t.Errorf("a rejected enqueue left entries: %s", got)
	}
}

// Deferred entries: pending but not leasable until run_at; expired ones
// are swept by enqueue, lease and next_deadline, never by list or stats.
func TestDeferredAndExpiry(t *testing.T) {
	f := newFixture(t, testConfig{})
	ts := func(d time.Duration) string { return f.now.Add(d).Format(time.RFC3339Nano) }
	due := f.enqueue("DUE", `,"run_at":"`+ts(-time.Hour)+`"`)
	later := f.enqueue("LATER", `,"run_at":"`+ts(time.Hour)+`","expire_after_secs":60`)
	soon := f.enqueue("SOON", `,"run_at":"`+ts(30*time.Minute)+`","expire_after_secs":0`)
	forever := f.enqueue("FOREVER", `,"run_at":"`+ts(-1000*time.Hour)+`","expire_after_secs":18446744073709551615`)
	f.enqueue("HELD", `,"run_at":"`+ts(10*time.Minute)+`"`)
	f.h.OK(t, "queue/hold", `{"entry_id":"id-5"}`, nil)
	f.want("queue/stats", "", `{"assigned":0,"deferred":2,"held":1,"pending":4,"total":5}`)
	f.want("queue/next_deadline", `{}`, `{"next_run_at":"2026-06-14T12:30:00.123456789+00:00"}`)

	// A run_at equal to now is due; one nanosecond later is not.
	f.now = f.now.Add(30 * time.Minute)
	f.want("queue/stats", "", `{"assigned":0,"deferred":1,"held":1,"pending":4,"total":5}`)
	f.now = f.now.Add(time.Nanosecond)
	// SOON (grace 0) is now strictly past run_at + 0: next_deadline sweeps it.
	f.want("queue/next_deadline", "", `{"next_run_at":"2026-06-14T13:00:00.123456789+00:00"}`)
	f.now = f.now.Add(30 * time.Minute) // LATER is due, within its 60 s grace
	f.want("queue/next_deadline", "", `{}`)
	f.now = f.now.Add(time.Minute) // now past LATER's grace
	// list does not sweep.
	if got := f.states(); !strings.Contains(got, later+":pending") {
		t.Errorf("list swept: %s", got)
	}
	out := string(f.h.OK(t, "queue/lease", `{"max":10}`, nil))
	for _, id := range []string{due, forever} {
		if !strings.Contains(out, `"entry_id":"`+id+`"`) {
			t.Errorf("lease did not return %s: %s", id, out)
		}
	}
	if strings.Contains(out, later) || strings.Contains(out, soon) {
		t.Errorf("lease returned an expired entry: %s", out)
	}
	if got := f.states(); got != due+":assigned "+forever+":assigned id-5:held" {
		t.Errorf("after lease: %s", got)
	}
	f.checkCounts()
	var expired []string
	for _, a := range f.audit() {
		if strings.Contains(a, ">expired") {
			expired = append(expired, a)
		}
	}
	if len(expired) != 2 || !strings.HasPrefix(expired[0], soon+" queue/next_deadline pending>expired") ||
		!strings.HasPrefix(expired[1], later+" queue/lease pending>expired") {
		t.Errorf("expiry audit %v", expired)
	}
}
