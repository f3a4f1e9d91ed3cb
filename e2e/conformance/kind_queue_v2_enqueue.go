package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// queue/v2/enqueue scenarios (queue-v2.md §5.4 3–9; semantics §3.2–§3.4).

const (
	repoURL  = "https://github.com/acme/app.git"
	baseMain = "refs/heads/main"
)

// scenarioV2EnqueueGenerations (3): a new subject gets generation 1, five
// subjects one each, listed with the canonical id and task_id.
func scenarioV2EnqueueGenerations(q *qv2) {
	ids := map[string]string{}
	for i := 1; i <= 5; i++ {
		task := fmt.Sprintf("TASK-%d", i)
		ids[q.enqueueNew(enqReq(task), "task:"+task, 1).EntryID] = task
	}
	l := q.list(`{}`)
	if len(l.Entries) != 5 {
		q.failf("listed %d entries, want 5", len(l.Entries))
	}
	for _, e := range l.Entries {
		task := ids[e.EntryID]
		if e.SubjectID != "task:"+task || e.TaskID == nil || *e.TaskID != task || e.Status != "pending" {
			q.failf("entry %s: subject_id %q task_id %v status %q; want task:%s, %s, pending", e.EntryID, e.SubjectID, e.TaskID, e.Status, task, task)
		}
	}
}

// scenarioV2IdempotencyKey (4): same key and content replays without a
// warning, also with a fresh requested_at; the key with any other content
// is refused.
func scenarioV2IdempotencyKey(q *qv2) {
	base := []func(M){withKey("gh-delivery-1:trigger-7"), withRepo(repoURL, baseMain, "refs/heads/animus/TASK-1")}
	first := q.enqueueNew(enqReq("TASK-1", base...), "task:TASK-1", 1)
	q.enqueueSame(enqReq("TASK-1", base...), first, "")
	q.enqueueSame(enqReq("TASK-1", append(base, withDispatch("requested_at", "2026-10-02T08:00:00Z"))...), first, "")
	others := map[string]func(M){
		"repository":   withRepo(repoURL, baseMain, "refs/heads/animus/other"),
		"workflow_ref": withDispatch("workflow_ref", "quick-fix"),
		"run_at":       withField("run_at", "2030-01-01T00:00:00Z"),
		"vars":         withDispatch("vars", M{"branch": "x"}),
		"actor":        withDispatch("actor", M{"user_id": "u-1"}),
	}
	for what, mod := range others {
		// mod comes last, so it overrides base's repository.
		if err := q.catch(func() { q.rpcErr("queue/v2/enqueue", enqReq("TASK-1", append(base, mod)...), -32602, boundElsewhere) }); err != nil {
			q.failf("other %s under the same key: %v", what, err)
		}
	}
	q.stats(`{"assigned":0,"deferred":0,"held":0,"pending":1,"total":1}`)
}

// scenarioV2KeyAfterFinish (5): a key replays its original receipt after
// the entry was completed, dropped or swept, including swept by the
// replaying call itself; a conflicting reuse after a same-call sweep is
// refused and persists nothing, not even the sweep.
func scenarioV2KeyAfterFinish(q *qv2) {
	done := q.enqueueNew(enqReq("TASK-1", withKey("k-done")), "task:TASK-1", 1)
	f := q.leaseOne(uniq("owner"), done.EntryID)
	q.expect("queue/v2/completion", complete(f, "completed"), "applied", "")
	q.enqueueSame(enqReq("TASK-1", withKey("k-done")), done, "")

	dropped := q.enqueueNew(enqReq("TASK-2", withKey("k-drop")), "task:TASK-2", 1)
	q.result("queue/drop", M{"entry_id": dropped.EntryID}, nil)
	q.enqueueSame(enqReq("TASK-2", withKey("k-drop")), dropped, "")

	expired := []func(M){withKey("k-swept"), withField("run_at", "2020-01-01T00:00:00Z"), withField("expire_after_secs", 60)}
	swept := q.enqueueNew(enqReq("TASK-3", expired...), "task:TASK-3", 1)
	q.rpcErr("queue/v2/enqueue", enqReq("TASK-3", append(expired, withDispatch("workflow_ref", "other"))...), -32602, boundElsewhere)
	q.status(swept.EntryID, "pending") // the refused call's sweep was rolled back
	q.enqueueSame(enqReq("TASK-3", expired...), swept, "")
	q.status(swept.EntryID, "") // swept by the replay itself
	q.enqueueSame(enqReq("TASK-3", expired...), swept, "")
}

// scenarioV2LiveSubject (6): a second add for a live subject (pending,
// held, assigned) returns the existing entry with the exact warning and
// binds the new key to it forever.
func scenarioV2LiveSubject(q *qv2) {
	first := q.enqueueNew(enqReq("TASK-1", withKey("k1")), "task:TASK-1", 1)
	warn := activeWarning("task:TASK-1")
	q.enqueueSame(enqReq("TASK-1", withKey("k2")), first, warn)
	q.enqueueSame(enqReq("TASK-1", withKey("k2")), first, "")
	q.stats(`{"assigned":0,"deferred":0,"held":0,"pending":1,"total":1}`)

	q.result("queue/hold", M{"entry_id": first.EntryID}, nil)
	q.enqueueSame(enqReq("TASK-1", withKey("k3")), first, warn)
	q.result("queue/release", M{"entry_id": first.EntryID}, nil)

	f := q.leaseOne(uniq("owner"), first.EntryID)
	q.enqueueSame(enqReq("TASK-1", withKey("k4")), first, warn)
	q.enqueueSame(enqReq("TASK-1"), first, warn)
	q.stats(`{"assigned":1,"deferred":0,"held":0,"pending":0,"total":1}`)

	q.expect("queue/v2/completion", complete(f, "completed"), "applied", "")
	q.enqueueSame(enqReq("TASK-1", withKey("k2")), first, "")
	q.rpcErr("queue/v2/enqueue", enqReq("TASK-1", withKey("k2"), withDispatch("workflow_ref", "other")), -32602, boundElsewhere)
}

// scenarioV2NextGeneration (7): an add after the entry finished makes
// generation 2; an old-style pending entry blocks a v2 add and gets
// identity; an old-style assigned entry does not block.
func scenarioV2NextGeneration(q *qv2) {
	a := q.enqueueNew(enqReq("TASK-1"), "task:TASK-1", 1)
	q.expect("queue/v2/completion", complete(q.leaseOne(uniq("owner"), a.EntryID), "failed"), "applied", "")
	b := q.enqueueNew(enqReq("TASK-1"), "task:TASK-1", 2)
	if b.EntryID == a.EntryID {
		q.failf("generation 2 reused entry id %s", a.EntryID)
	}

	var old struct {
		EntryID string `json:"entry_id"`
	}
	q.result("queue/enqueue", queueDispatch("TASK-2", ""), &old)
	q.enqueueSame(enqReq("TASK-2"), queuev2.EnqueueResponse{EntryID: old.EntryID,
		Subject: queuev2.SubjectGeneration{QualifiedID: "task:TASK-2", Generation: 1}}, activeWarning("task:TASK-2"))

	q.result("queue/enqueue", queueDispatch("TASK-3", ""), &old)
	var leased struct {
		Leased []queueEntry `json:"leased"`
	}
	q.result("queue/lease", M{"max": 5}, &leased)
	if len(leased.Leased) != 1 || leased.Leased[0].EntryID != old.EntryID {
		q.failf("old-style lease took %+v, want only the old-style TASK-3 entry (ticketed entries are skipped)", leased.Leased)
	}
	c := q.enqueueNew(enqReq("TASK-3"), "task:TASK-3", 1)
	if c.EntryID == old.EntryID {
		q.failf("an assigned old-style entry blocked the v2 add")
	}
}

// scenarioV2EnqueueErrors (8): every invalid add is -32602 and writes
// nothing (no entry, no generation consumed).
func scenarioV2EnqueueErrors(q *qv2) {
	long := strings.Repeat("k", 257)
	// msg is a part of the reference's message (§2.5, §2.7, §3.2, §3.4).
	cases := []struct {
		name, msg string
		req       M
	}{
		{"subjectless", "requires a subject", M{"subject_dispatch": M{"requested_at": "2026-10-01T12:00:00Z", "trigger_source": "t", "workflow_ref": "standard"}}},
		{"blank workflow_ref", "requires workflow_ref", enqReq("TASK-1", withDispatch("workflow_ref", "  "))},
		{"blank key", "idempotency_key", enqReq("TASK-1", withKey("   "))},
		{"257-char key", "at most 256 characters", enqReq("TASK-1", withKey(long))},
		{"head_ref main", "safe fully-qualified git ref", enqReq("TASK-1", withRepo(repoURL, baseMain, "main"))},
		{"base_ref == head_ref", "base_ref and head_ref must differ", enqReq("TASK-1", withRepo(repoURL, baseMain, baseMain))},
		{"blank repository", "must not be empty", enqReq("TASK-1", withRepo("  ", baseMain, "refs/heads/x"))},
		{"blank subject id", "", enqReq("  ")},
		{"subject id task:", "queue subject identity is missing", enqReq("task:")},
		{"malformed run_at", "run_at must be RFC 3339", enqReq("TASK-1", withField("run_at", "tomorrow"))},
		{"expire 2^63-1", "too large", enqReq("TASK-1", withField("expire_after_secs", uint64(1<<63-1)))},
		{"expire 2^64-1", "too large", enqReq("TASK-1", withField("expire_after_secs", uint64(1<<64-1)))},
		{"run_at + 2^63-1", "too large", enqReq("TASK-1", withField("run_at", "2030-01-01T00:00:00Z"), withField("expire_after_secs", uint64(1<<63-1)))},
		{"run_at + 2^64-1", "too large", enqReq("TASK-1", withField("run_at", "2030-01-01T00:00:00Z"), withField("expire_after_secs", uint64(1<<64-1)))},
		{"negative expire", "", enqReq("TASK-1", withField("expire_after_secs", -1))},
	}
	for _, c := range cases {
		if err := q.catch(func() { q.rpcErr("queue/v2/enqueue", c.req, -32602, c.msg) }); err != nil {
			q.failf("%s: %v", c.name, err)
		}
	}
	q.stats(`{"assigned":0,"deferred":0,"held":0,"pending":0,"total":0}`)
	q.enqueueNew(enqReq("TASK-1", withKey(strings.Repeat("k", 256))), "task:TASK-1", 1)
}

// scenarioV2CanonicalIDs (9): the canonical id table of §3.2, repository
// stored trimmed, a deferred run_at echoed verbatim and counted.
func scenarioV2CanonicalIDs(q *qv2) {
	cases := []struct{ subject, qid string }{
		{"TASK-1", "task:TASK-1"},
		{"task:TASK-1216", "task:TASK-1216"},
		{"TASK:X", "task:X"},
		{`{"kind":"task","id":"TASK-LEGACY"}`, "task:TASK-LEGACY"},
		{`{"kind":"animus.task","id":"TASK-2"}`, "task:TASK-2"},
		{`{"kind":"animus.requirement","id":"REQ-1"}`, "requirement:REQ-1"},
		{`{"kind":"trigger_event","id":"github-delivery-1177"}`, "trigger_event:github-delivery-1177"},
		{`{"kind":"Linear.Issue","id":" ENG-7 "}`, "Linear.Issue:ENG-7"},
		{`{"Custom":{"title":"Nightly","description":"d"}}`, "custom:Nightly"},
	}
	want := map[string]string{}
	for _, c := range cases {
		want[q.enqueueNew(enqReq(c.subject), c.qid, 1).EntryID] = c.qid
	}
	for _, e := range q.list(`{}`).Entries {
		if e.SubjectID != want[e.EntryID] {
			q.failf("listed subject_id %q, want %q", e.SubjectID, want[e.EntryID])
		}
		if e.SubjectID == "task:TASK-1" && (e.TaskID == nil || *e.TaskID != "TASK-1") {
			q.failf("task:TASK-1 lists task_id %v, want TASK-1", e.TaskID)
		}
		if strings.HasPrefix(e.SubjectID, "requirement:") && e.TaskID != nil {
			q.failf("a requirement lists task_id %q", *e.TaskID)
		}
	}
	for _, e := range q.list(`{}`).Entries {
		q.result("queue/drop", M{"entry_id": e.EntryID}, nil)
	}

	r := q.enqueueNew(enqReq("TASK-9", withRepo("  acme/app  ", " "+baseMain+" ", " refs/heads/animus/TASK-9 ")), "task:TASK-9", 1)
	f := q.leaseOne(uniq("owner"), r.EntryID)
	if f.Repository == nil || *f.Repository != (queuev2.RepositoryReservation{Repository: "acme/app", BaseRef: baseMain, HeadRef: "refs/heads/animus/TASK-9"}) {
		q.failf("repository came back as %+v, want the trimmed reservation", f.Repository)
	}

	runAt := time.Now().Add(72 * time.Hour).In(time.FixedZone("", 2*3600)).Format("2006-01-02T15:04:05.000-07:00")
	d := q.enqueueNew(enqReq("TASK-10", withField("run_at", runAt)), "task:TASK-10", 1)
	if raw := q.result("queue/list", `{"status":["pending"]}`, nil); !strings.Contains(string(raw), `"run_at":"`+runAt+`"`) {
		q.failf("deferred entry %s: run_at not echoed verbatim as %q: %s", d.EntryID, runAt, clip(raw))
	}
	q.stats(`{"assigned":1,"deferred":1,"held":0,"pending":1,"total":2}`)
}
