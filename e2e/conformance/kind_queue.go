package conformance

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// QueueSuite is the queue kind's suite (kind key "queue"): every method of
// queue protocol 0.3.2, its happy paths and every error code of the
// reference behaviour table (queue.md §3.4, §3.6), run the way the daemon
// runs a queue: a fresh process per call (initialize → initialized → one
// method → shutdown → exit) against one project root, so everything a
// call changes must survive into the next process.
func QueueSuite() []Scenario {
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	return []Scenario{
		{"queue", "handshake-capabilities", scenarioQueueHandshake},
		{"queue", "unbound-answers-32207", scenarioQueueUnbound},
		{"queue", "enqueue-list-stats", queueSteps(
			enq("a", "TASK-1", ""), enq("b", `{"kind":"linear.issue","id":"ENG-7","title":"Fix"}`, ""),
			qstep{method: "queue/list", params: `{}`, check: checkListBasics},
			qstep{method: "queue/stats", params: `{}`, want: `{"assigned":0,"deferred":0,"held":0,"pending":2,"total":2}`},
		)},
		{"queue", "enqueue-never-dedupes", queueSteps(
			enqWarn("a", "TASK-1", ""),
			enqWarn("b", "TASK-1", "subject TASK-1 already has 1 queued entry; duplicate enqueued"),
			enqWarn("c", "TASK-1", "subject TASK-1 already has 2 queued entries; duplicate enqueued"),
			listIs("a:pending b:pending c:pending"),
		)},
		{"queue", "subject-forms-round-trip", scenarioQueueSubjects},
		{"queue", "dispatch-round-trip", scenarioQueueDispatch},
		{"queue", "fifo-and-reorder", queueSteps(
			enq("a", "TASK-A", ""), enq("b", "TASK-B", ""), enq("c", "TASK-C", ""),
			listIs("a:pending b:pending c:pending"),
			ok("queue/reorder", `{"entry_ids":["$c"]}`, `{"reordered_count":3}`),
			listIs("c:pending a:pending b:pending"),
			ok("queue/reorder", `{"entry_ids":["$c"]}`, `{"reordered_count":0}`),
			ok("queue/reorder", `{"entry_ids":["nope","$b","$b"]}`, `{"reordered_count":3}`),
			leaseIs(`{"max":1}`, "b/*"),
		)},
		{"queue", "lease-workflow-ids", queueSteps(
			enq("a", "TASK-A", ""), enq("b", "TASK-B", ""), enq("c", "TASK-C", ""),
			leaseIs(`{"max":2,"workflow_ids":["w1","w2"]}`, "a/w1 b/w2"),
			listIs("a:assigned b:assigned c:pending"),
			leaseIs(`{"max":5}`, "c/*"),
			leaseIs(`{"max":5}`, ""),
		)},
		{"queue", "lease-exclusion-and-batch", queueSteps(
			enq("a", "T1", ""), enq("b", "T1", ""), enq("c", "T2", ""), enq("d", "T3", ""),
			leaseIs(`{"max":3,"workflow_ids":["w1","w2","w3"],"exclude_subjects":["T3"]}`, "a/w1 c/w2"),
			listIs("a:assigned b:pending c:assigned d:pending"),
			leaseIs(`{"max":1,"workflow_ids":["w4"],"exclude_subjects":["T1"]}`, "d/w4"),
		)},
		{"queue", "lease-errors", queueSteps(
			enq("a", "TASK-1", ""),
			fails("queue/lease", `{"max":2,"workflow_ids":["w1"]}`, -32206, dataIs(`{"actual":1,"expected":2}`)),
			fails("queue/lease", "", -32602, nil),
			fails("queue/lease", `{"max":-1}`, -32602, nil),
			ok("queue/lease", `{"max":0}`, `{"leased":[]}`),
			listIs("a:pending"),
		)},
		{"queue", "deferred-entries", queueSteps(
			enq("a", "TASK-1", `,"run_at":"`+future+`"`), enq("b", "TASK-2", `,"run_at":"2020-01-01T00:00:00Z"`),
			qstep{method: "queue/stats", params: `{}`, want: `{"assigned":0,"deferred":1,"held":0,"pending":2,"total":2}`},
			leaseIs(`{"max":5}`, "b/*"),
			qstep{method: "queue/next_deadline", params: `{}`, check: checkDeadline(future)},
			qstep{method: "queue/list", params: `{"status":["pending"]}`, check: rawContains(`"run_at":"` + future + `"`)},
		)},
		// Enqueue sweeps before it appends, so the expired entry goes in
		// last: list (which never sweeps) still shows it.
		{"queue", "expiry-sweep-and-u64", queueSteps(
			enq("b", "TASK-2", `,"run_at":"2020-01-01T00:00:00Z","expire_after_secs":18446744073709551615`),
			enq("c", "TASK-3", `,"expire_after_secs":1`),
			enq("a", "TASK-1", `,"run_at":"2020-01-01T00:00:00Z","expire_after_secs":60`),
			listIs("b:pending c:pending a:pending"),
			qstep{method: "queue/list", params: `{}`, check: rawContains(`"expire_after_secs":18446744073709551615`)},
			ok("queue/next_deadline", `{}`, `{}`),
			listIs("b:pending c:pending"),
			leaseIs(`{"max":5}`, "b/* c/*"),
		)},
		{"queue", "hold-release", queueSteps(
			enq("a", "TASK-1", ""), enq("b", "TASK-2", ""),
			ok("queue/hold", `{"entry_id":"$a","reason":"operator"}`, changed),
			ok("queue/hold", `{"entry_id":"$a"}`, unchanged),
			qstep{method: "queue/list", params: `{"status":["held"]}`, check: rawContains(`"held_at":`)},
			leaseIs(`{"max":5}`, "b/*"),
			ok("queue/release", `{"entry_id":"$a"}`, changed),
			ok("queue/release", `{"entry_id":"$a"}`, unchanged),
			listIs("a:pending b:assigned"),
			fails("queue/hold", `{"entry_id":"$b"}`, -32203, nil),
			fails("queue/release", `{"entry_id":"$b"}`, -32203, nil),
			ok("queue/hold", `{"entry_id":"nope"}`, notFound),
			ok("queue/release", `{"entry_id":"nope"}`, notFound),
		)},
		{"queue", "mark-assigned", queueSteps(
			enq("a", "TASK-1", `,"run_at":"`+future+`"`), enq("b", "TASK-2", ""),
			ok("queue/mark_assigned", `{"entry_id":"$a","workflow_id":"wf-a"}`, changed),
			ok("queue/mark_assigned", `{"entry_id":"$a","workflow_id":"other"}`, unchanged),
			qstep{method: "queue/list", params: `{"status":["assigned"]}`, check: rawContains(`"workflow_id":"wf-a"`)},
			ok("queue/hold", `{"entry_id":"$b"}`, changed),
			fails("queue/mark_assigned", `{"entry_id":"$b"}`, -32203, nil),
			ok("queue/mark_assigned", `{"entry_id":"nope"}`, notFound),
		)},
		{"queue", "drop", queueSteps(
			enq("a", "TASK-1", ""), enq("b", "TASK-2", ""), enq("c", "TASK-3", ""),
			leaseIs(`{"max":1}`, "a/*"),
			ok("queue/hold", `{"entry_id":"$b"}`, changed),
			ok("queue/drop", `{"entry_id":"$a"}`, changed),
			ok("queue/drop", `{"entry_id":"$b"}`, changed),
			ok("queue/drop", `{"entry_id":"$c"}`, changed),
			ok("queue/drop", `{"entry_id":"$a"}`, notFound),
			ok("queue/stats", `{}`, `{"assigned":0,"deferred":0,"held":0,"pending":0,"total":0}`),
		)},
		{"queue", "completion", queueSteps(
			enq("a", "TASK-1", ""), enq("b", "TASK-2", ""),
			leaseIs(`{"max":2,"workflow_ids":["w1","w2"]}`, "a/w1 b/w2"),
			fails("queue/completion", `{"entry_id":"$a","status":"done"}`, -32602, nil),
			ok("queue/completion", `{"entry_id":"$a","status":"completed","workflow_ref":"other"}`, notFound),
			ok("queue/completion", `{"entry_id":"$a","status":"completed","workflow_id":"w9"}`, notFound),
			ok("queue/completion", `{"entry_id":"$a","status":"completed","workflow_ref":"standard","workflow_id":"w1"}`, changed),
			ok("queue/completion", `{"entry_id":"$a","status":"completed","workflow_ref":"standard"}`, notFound),
			ok("queue/completion", `{"entry_id":"$b","status":"failed","workflow_ref":"standard"}`, changed),
			enq("c", "TASK-3", ""),
			ok("queue/completion", `{"entry_id":"$c","status":"cancelled"}`, notFound),
			listIs("c:pending"),
		)},
		{"queue", "release-pending", queueSteps(
			enq("a", "TASK-1", ""), enq("b", "TASK-2", ""),
			leaseIs(`{"max":2,"workflow_ids":["w1","w2"]}`, "a/w1 b/w2"),
			ok("queue/release_pending", `{"entry_id":"$a","reason":"within-batch-duplicate-subject"}`, `{"entry_id":"$a","status":"pending"}`),
			listIs("a:pending b:assigned"),
			qstep{method: "queue/list", params: `{"status":["pending"]}`, check: rawLacks(`"workflow_id"`, `"assigned_at"`)},
			fails("queue/release_pending", `{"entry_id":"$a","reason":"again"}`, -32208, dataIs(`{"actual_state":"pending"}`)),
			ok("queue/hold", `{"entry_id":"$a"}`, changed),
			fails("queue/release_pending", `{"entry_id":"$a","reason":"r"}`, -32208, dataIs(`{"actual_state":"held"}`)),
			fails("queue/release_pending", `{"entry_id":"nope","reason":"r"}`, -32602, nil),
			fails("queue/release_pending", `{"entry_id":"$b"}`, -32602, nil),
			ok("queue/release", `{"entry_id":"$a"}`, changed),
			leaseIs(`{"max":1,"workflow_ids":["w3"]}`, "a/w3"),
		)},
		{"queue", "list-filters-pagination", scenarioQueuePaging},
		{"queue", "invalid-params", queueSteps(
			fails("queue/enqueue", "", -32602, nil),
			fails("queue/enqueue", `{}`, -32602, nil),
			fails("queue/enqueue", `{"subject_dispatch":{"subject":{"Task":{"id":"T"}},"workflow_ref":"w","trigger_source":"t","requested_at":"2026-06-14T12:00:00Z","vars":{"n":1}}}`, -32602, nil),
			fails("queue/enqueue", `{"subject_dispatch":{"subject":{"Task":{}},"workflow_ref":"w","trigger_source":"t","requested_at":"2026-06-14T12:00:00Z"}}`, -32602, nil),
			fails("queue/completion", `{}`, -32602, nil),
			fails("queue/hold", `{"entry_id":5}`, -32602, nil),
			ok("queue/stats", `{}`, `{"assigned":0,"deferred":0,"held":0,"pending":0,"total":0}`),
		)},
		// The daemon's own traffic (queue.md §5.2, §5.3): a dispatch tick,
		// then the two reconcilers of a finished workflow, then the next tick.
		{"queue", "daemon-cycle", queueSteps(
			enq("a", "TASK-7", ""), enq("b", "TASK-7", ""), enq("c", "TASK-8", ""),
			leaseIs(`{"exclude_subjects":["TASK-8"],"max":2,"workflow_ids":["w1","w2"]}`, "a/w1"),
			qstep{method: "queue/list", params: `{"status":["assigned"]}`, check: listNames("a")},
			ok("queue/completion", `{"entry_id":"$a","status":"completed","workflow_id":"w1","workflow_ref":"standard"}`, changed),
			ok("queue/completion", `{"entry_id":"$a","status":"completed","workflow_ref":"standard"}`, notFound),
			leaseIs(`{"max":2,"workflow_ids":["w3","w4"]}`, "b/w3 c/w4"),
		)},
	}
}

// scenarioQueuePaging: status filters, limit/offset and the filtered
// total. limit:0 lists nothing under queue 0.3.2; a queue that passes the
// 0.7 gate answers a 0.7 host with the 0.4.0 rule instead (limit clamped
// to 1..2000, queue-v2.md §3.10, §6.7), and the 0.3.2 rule to a 0.6 host.
func scenarioQueuePaging(ctx context.Context, s *Session) Outcome {
	limit0 := ""
	if _, err := RequireGenerationFencedQueue(s.Init); err == nil && s.Daemon == fakehost.Daemon07 {
		limit0 = "a"
	}
	return queueSteps(
		enq("a", "TASK-1", ""), enq("b", "TASK-2", ""), enq("c", "TASK-3", ""), enq("d", "TASK-4", ""),
		leaseIs(`{"max":1}`, "a/*"),
		ok("queue/hold", `{"entry_id":"$c"}`, changed),
		listPage(`{"status":["pending","held"]}`, "b c d", 3),
		listPage(`{"status":["pending","held"],"limit":1,"offset":1}`, "c", 3),
		listPage(`{"status":["bogus"]}`, "", 0),
		listPage(`{"limit":0}`, limit0, 4),
		listPage(`{"offset":10}`, "", 4),
		listPage("", "a b c d", 4),
	)(ctx, s)
}

// scenarioQueueHandshake: the queue client's handshake gets plugin_kind
// "queue", every 0.3.2 method, and kind_capabilities.queue with crate
// 0.3.2, strict FIFO (priority_weighted false) and a max_lease_batch.
func scenarioQueueHandshake(ctx context.Context, s *Session) Outcome {
	p, err := newQueueProject(s)
	if err != nil {
		return failf("%v", err)
	}
	_, res, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetQueueClient}, func(c *fakehost.Config) { c.Dir = p.dir })
	if err != nil {
		return failf("%v", err)
	}
	if res.PluginInfo.PluginKind != "queue" {
		return failf("plugin_kind %q, want queue", res.PluginInfo.PluginKind)
	}
	for _, m := range []string{"queue/enqueue", "queue/list", "queue/lease", "queue/stats", "queue/next_deadline", "queue/hold",
		"queue/release", "queue/release_pending", "queue/drop", "queue/reorder", "queue/mark_assigned", "queue/completion", "health/check"} {
		if !contains(res.Capabilities.Methods, m) {
			return failf("capabilities.methods lacks %s", m)
		}
	}
	// A queue that passes the 0.7 gate speaks crate 0.4.0 to every host
	// (queue-v2.md §1.3); the queue-v2 suite checks the rest of it.
	want := "0.3.2"
	if _, err := RequireGenerationFencedQueue(res); err == nil {
		want = "0.4.0"
	}
	kc, ok := res.KindCapabilities["queue"]
	if !ok || kc.CrateVersion != want {
		return failf("kind_capabilities.queue = %+v, want crate_version %s", kc, want)
	}
	if err := s.Schemas.Validate(schemacheck.QueueProtocol, "QueueCapabilities", kc.Extra); err != nil {
		return failf("kind_capabilities.queue.extra: %v", err)
	}
	var extra struct {
		MaxLeaseBatch    *uint64 `json:"max_lease_batch"`
		PriorityWeighted *bool   `json:"priority_weighted"`
	}
	if json.Unmarshal(kc.Extra, &extra) != nil || extra.MaxLeaseBatch == nil || *extra.MaxLeaseBatch == 0 ||
		extra.PriorityWeighted == nil || *extra.PriorityWeighted {
		return failf("kind_capabilities.queue.extra %s: want max_lease_batch > 0 and priority_weighted false", kc.Extra)
	}
	return pass()
}

// scenarioQueueUnbound: a handshake without project_binding (the daemon's
// generic health handshake) succeeds and creates nothing; every queue
// method then answers -32207.
func scenarioQueueUnbound(ctx context.Context, s *Session) Outcome {
	dir, err := s.TempDir()
	if err != nil {
		return failf("%v", err)
	}
	h, _, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}, func(c *fakehost.Config) { c.Dir = dir })
	if err != nil {
		return failf("initialize without project_binding must succeed: %v", err)
	}
	for _, m := range []struct{ method, params string }{
		{"queue/enqueue", queueDispatch("TASK-1", "")}, {"queue/list", `{}`}, {"queue/lease", `{"max":1}`},
		{"queue/stats", `{}`}, {"queue/next_deadline", `{}`}, {"queue/hold", `{"entry_id":"x"}`},
		{"queue/release", `{"entry_id":"x"}`}, {"queue/release_pending", `{"entry_id":"x","reason":"r"}`},
		{"queue/drop", `{"entry_id":"x"}`}, {"queue/reorder", `{"entry_ids":["x"]}`},
		{"queue/mark_assigned", `{"entry_id":"x"}`}, {"queue/completion", `{"entry_id":"x","status":"completed"}`},
	} {
		resp, err := call(ctx, h, 5*time.Second, m.method, json.RawMessage(m.params))
		if err != nil {
			return failf("%v", err)
		}
		if err := wantError(resp, -32207, ""); err != nil {
			return failf("%s without a project binding: %v", m.method, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		return failf("an unbound process created %d file(s) in its cwd", len(ents))
	}
	return pass()
}

// scenarioQueueSubjects: SubjectRef's legacy and generic forms come back as
// the references emit them (queue.md §2.2), with subject_key and task_id.
func scenarioQueueSubjects(ctx context.Context, s *Session) Outcome {
	cases := []struct{ in, out, key, taskID string }{
		{`{"Task":{"id":"TASK-1"}}`, `{"Task":{"id":"TASK-1"}}`, "TASK-1", "TASK-1"},
		{`{"Requirement":{"id":"REQ-1"}}`, `{"Requirement":{"id":"REQ-1"}}`, "REQ-1", ""},
		{`{"Custom":{"title":"Nightly","description":"d"}}`, `{"Custom":{"description":"d","title":"Nightly"}}`, "Nightly", ""},
		{`{"kind":"animus.task","id":"TASK-2"}`, `{"Task":{"id":"TASK-2"}}`, "TASK-2", "TASK-2"},
		{`{"kind":"linear.issue","id":"ENG-7","title":"Fix","labels":["bug"],"metadata":{"team":"core"}}`,
			`{"id":"ENG-7","kind":"linear.issue","labels":["bug"],"metadata":{"team":"core"},"title":"Fix"}`, "linear.issue::ENG-7", ""},
		{`{"kind":"task","id":"X"}`, `{"id":"X","kind":"task"}`, "task::X", ""},
	}
	p, err := newQueueProject(s)
	if err != nil {
		return failf("%v", err)
	}
	for _, c := range cases {
		resp, err := p.call(ctx, "queue/enqueue", queueDispatch(c.in, ""))
		if err != nil {
			return failf("%v", err)
		}
		if err := wantResult(resp, nil); err != nil {
			return failf("enqueue %s: %v", c.in, err)
		}
	}
	resp, err := p.call(ctx, "queue/list", `{}`)
	if err != nil {
		return failf("%v", err)
	}
	var l queueList
	if err := wantResult(resp, &l); err != nil || len(l.Entries) != len(cases) {
		return failf("list: %v (%d entries)", err, len(l.Entries))
	}
	for i, c := range cases {
		e := l.Entries[i]
		var d struct {
			Subject json.RawMessage `json:"subject"`
		}
		_ = json.Unmarshal(e.SubjectDispatch, &d)
		if err := jsonEqual(d.Subject, c.out); err != nil {
			return failf("subject %s came back: %v", c.in, err)
		}
		gotTask := ""
		if e.TaskID != nil {
			gotTask = *e.TaskID
		}
		if e.SubjectID != c.key || gotTask != c.taskID || (c.taskID == "") != (e.TaskID == nil) {
			return failf("subject %s: subject_id %q task_id %v, want %q and %q", c.in, e.SubjectID, e.TaskID, c.key, c.taskID)
		}
	}
	return pass()
}

// scenarioQueueDispatch: the dispatch envelope survives the queue: vars
// exactly (the daemon reads task_generation, branch, git_ref back), input,
// priority, trigger_source, workflow_ref, and requested_at as an instant.
func scenarioQueueDispatch(ctx context.Context, s *Session) Outcome {
	const sent = `{"input":{"b":{"c":"d"},"a":[1,2,{"x":null}]},"priority":"high","requested_at":"2026-06-14T14:00:00.5+02:00",` +
		`"subject":{"Task":{"id":"TASK-9"}},"trigger_source":"trigger:slack","unknown_field":true,` +
		`"vars":{"task_generation":"3","branch":"feat/x","git_ref":"refs/heads/feat/x","pull_request":"42","empty":""},"workflow_ref":"quick-fix"}`
	p, err := newQueueProject(s)
	if err != nil {
		return failf("%v", err)
	}
	resp, err := p.call(ctx, "queue/enqueue", `{"subject_dispatch":`+sent+`}`)
	if err != nil {
		return failf("%v", err)
	}
	if err := wantResult(resp, nil); err != nil {
		return failf("%v", err)
	}
	resp, err = p.call(ctx, "queue/lease", `{"max":1,"workflow_ids":["w"]}`)
	if err != nil {
		return failf("%v", err)
	}
	var r struct {
		Leased []queueEntry `json:"leased"`
	}
	if err := wantResult(resp, &r); err != nil || len(r.Leased) != 1 {
		return failf("lease: %v %s", err, clip(resp.Result))
	}
	var got map[string]json.RawMessage
	_ = json.Unmarshal(r.Leased[0].SubjectDispatch, &got)
	for field, want := range map[string]string{
		"input":          `{"a":[1,2,{"x":null}],"b":{"c":"d"}}`,
		"priority":       `"high"`,
		"subject":        `{"Task":{"id":"TASK-9"}}`,
		"trigger_source": `"trigger:slack"`,
		"vars":           `{"branch":"feat/x","empty":"","git_ref":"refs/heads/feat/x","pull_request":"42","task_generation":"3"}`,
		"workflow_ref":   `"quick-fix"`,
	} {
		if err := jsonEqual(got[field], want); err != nil {
			return failf("subject_dispatch.%s: %v", field, err)
		}
	}
	var at string
	_ = json.Unmarshal(got["requested_at"], &at)
	parsed, err := time.Parse(time.RFC3339Nano, at)
	if err != nil || !parsed.Equal(time.Date(2026, 6, 14, 12, 0, 0, 500_000_000, time.UTC)) {
		return failf("requested_at came back as %q", at)
	}
	return pass()
}
