package queuesqlite

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// TestDispatch07Tick plays the Animus 0.7 daemon and CLI against the built
// binary (queue-v2.md §4), every call a fresh process with the 0.7 queue
// client's handshake, and applies the daemon's own acceptance rules to
// every reply (queuev2.AcceptLeased, AcceptRenew, AcceptRecover). The script:
//
//   - CLI: v2 enqueues with idempotency keys and repository reservations,
//     a replay, a second add for a live subject, one deferred entry, hold
//     and drop by subject id;
//   - tick 1: batch 5, no exclude; the local scheduler rejects one entry
//     (its repository collides only after the daemon's normalisation) and
//     one spawn is deferred, both put back; heartbeats; one run completes,
//     one fails;
//   - CLI release; tick 2: batch = free slots, exclude = tracked fences, a
//     queue-side repository block, put-back entries keep their workflow
//     ids; the old-style reconciler completes one run first, so the v2
//     completion is already_applied;
//   - restart: new owner, tickets left to expire (TTL 2 s); one run is
//     finished with its stored expired ticket, the others recovered and
//     completed; stale tickets get stale_fence.
//
// The queue's state is checked after each phase with queue/list and
// queue/stats, the CLI's own calls.
func TestDispatch07Tick(t *testing.T) {
	start := time.Now()
	p := newProject(t)
	p.env["ANIMUS_QUEUE_LEASE_TTL_SECS"] = "2"
	spawned := processes07.Load()
	defer func() {
		t.Logf("0.7 dispatch tick script: %d plugin processes (one per call) in %v, including one 2 s TTL expiry",
			processes07.Load()-spawned, time.Since(start).Round(time.Millisecond))
	}()

	// The CLI enqueues (animus queue enqueue): the 0.7 CLI creates task
	// subjects already qualified, with a repository derived from them.
	code := func(repo, head string) *queuev2.RepositoryReservation {
		return &queuev2.RepositoryReservation{Repository: repo, BaseRef: "refs/heads/main", HeadRef: head}
	}
	ent := map[string]queuev2.EnqueueResponse{}
	add := func(task, key string, repo *queuev2.RepositoryReservation, runAt string) queuev2.EnqueueResponse {
		t.Helper()
		r := p.enqueue07(task, key, repo, runAt)
		if !r.Enqueued || r.Warning != nil || r.Subject != (queuev2.SubjectGeneration{QualifiedID: "task:" + task, Generation: 1}) {
			t.Fatalf("enqueue %s: %+v, want a new entry with subject task:%s generation 1", task, r, task)
		}
		ent[task] = r
		return r
	}
	add("TASK-1", "cli-1", code("acme/app", "refs/heads/animus/TASK-1"), "")
	add("TASK-2", "cli-2", code("acme/app", "refs/heads/animus/TASK-2"), "")
	// Same head ref as TASK-1 under another spelling of the remote: the
	// queue's collision key differs, the daemon's normalised one does not.
	add("TASK-3", "cli-3", code("https://github.com/acme/app.git", "refs/heads/animus/TASK-1"), "")
	add("TASK-4", "cli-4", nil, "")
	deferredTo := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	add("TASK-5", "cli-5", nil, deferredTo.Format(time.RFC3339))
	add("TASK-6", "cli-6", code("acme/app", "refs/heads/animus/TASK-6"), "")
	add("TASK-7", "cli-7", nil, "")
	add("TASK-8", "cli-8", nil, "")

	// A CLI retry of the same request (requested_at is new every attempt)
	// replays the receipt; a trigger adding the live TASK-2 gets it back.
	if r := p.enqueue07("TASK-1", "cli-1", code("acme/app", "refs/heads/animus/TASK-1"), ""); r.Enqueued || r.EntryID != ent["TASK-1"].EntryID || r.Warning != nil {
		t.Errorf("idempotent replay: %+v, want the first receipt without warning", r)
	}
	if r := p.enqueue07("TASK-2", "delivery-77:trigger-7", code("acme/app", "refs/heads/animus/TASK-2"), ""); r.Enqueued ||
		r.EntryID != ent["TASK-2"].EntryID || r.WarningText() != "subject task:TASK-2 already has an active generation; enqueue rejected" {
		t.Errorf("second add of a live subject: %+v", r)
	}
	// animus queue hold TASK-7 / drop TASK-8: bare ids match the stored
	// canonical subject ids.
	if got := p.cliBySubject("queue/hold", "TASK-7"); !slices.Equal(got, []string{ent["TASK-7"].EntryID}) {
		t.Errorf("hold TASK-7 acted on %v", got)
	}
	if got := p.cliBySubject("queue/drop", "task:TASK-8"); !slices.Equal(got, []string{ent["TASK-8"].EntryID}) {
		t.Errorf("drop task:TASK-8 acted on %v", got)
	}
	p.expectQueue("after the CLI", queueStats{Total: 7, Pending: 6, Held: 1, Deferred: 1},
		map[string]string{"TASK-1": "pending", "TASK-2": "pending", "TASK-3": "pending", "TASK-4": "pending",
			"TASK-5": "pending", "TASK-6": "pending", "TASK-7": "held"})

	// Tick 1: five free slots, nothing tracked.
	d1 := p.startDaemon07()
	fleet := newLocalFleet()
	t1 := d1.tick(fleet, "task:TASK-4")
	if t1.max != 5 || len(t1.blocked) != 0 {
		t.Errorf("tick 1: max %d, blocked %+v; want 5 and none", t1.max, t1.blocked)
	}
	expectSubjects(t, "tick 1 started", t1.started, "task:TASK-1", "task:TASK-2", "task:TASK-6")
	expectSubjects(t, "tick 1 rejected locally", t1.rejected, "task:TASK-3")
	expectSubjects(t, "tick 1 spawn deferred", t1.deferred, "task:TASK-4")
	for _, f := range append(append(t1.started, t1.rejected...), t1.deferred...) {
		if f.QueueLease.Generation != 1 || f.Subject.Generation != 1 || f.WorkflowGeneration != 1 {
			t.Errorf("tick 1 %s: lease/subject/workflow generations %d/%d/%d, want 1/1/1", f.Subject.QualifiedID,
				f.QueueLease.Generation, f.Subject.Generation, f.WorkflowGeneration)
		}
		if left := time.Until(f.Expiry()); left <= 0 || left > 3*time.Second {
			t.Errorf("tick 1 %s: expires in %v, want ≈ the configured 2 s", f.Subject.QualifiedID, left)
		}
	}
	p.expectQueue("after tick 1", queueStats{Total: 7, Pending: 3, Assigned: 3, Held: 1, Deferred: 1},
		map[string]string{"TASK-1": "assigned", "TASK-2": "assigned", "TASK-3": "pending", "TASK-4": "pending",
			"TASK-5": "pending", "TASK-6": "assigned", "TASK-7": "held"})

	// A put-back whose answer was lost is retried: already_applied.
	if len(t1.deferred) == 1 {
		expect(t, "release_pending retry", d1.releasePending(t1.deferred[0], "spawn-deferred"), "already_applied", "")
	}

	// The workflows run: heartbeats, one of them after the operator lowered
	// the TTL, which must not shorten the ticket (§5.4 item 28; the
	// daemon's renewal check would fail). Then TASK-1 completes (and the
	// daemon retries the completion whose answer it lost) and TASK-6 fails.
	for _, ttl := range []string{"2", "1", "2"} {
		p.env["ANIMUS_QUEUE_LEASE_TTL_SECS"] = ttl
		d1.heartbeat(fleet)
	}
	f1 := fleet.tracked[ent["TASK-1"].EntryID]
	d1.finish(fleet, f1, "completed", "applied")
	expect(t, "completion retry", d1.complete(f1, "failed"), "already_applied", "")
	d1.finish(fleet, fleet.tracked[ent["TASK-6"].EntryID], "failed", "applied")

	// The CLI between ticks: release TASK-7, add TASK-9 on TASK-2's branch.
	if got := p.cliBySubject("queue/release", "TASK-7"); len(got) != 1 {
		t.Errorf("release TASK-7 acted on %v", got)
	}
	add("TASK-9", "cli-9", code("acme/app", "refs/heads/animus/TASK-2"), "")
	// animus queue reorder task:TASK-9: to the front, where it is blocked
	// by TASK-2's branch without taking a slot from the entries behind it.
	if n := p.cliReorder("task:TASK-9"); n == 0 {
		t.Errorf("reorder task:TASK-9 moved nothing")
	}
	// The daemon sleeps until the deferred entry is due.
	var next struct {
		NextRunAt string `json:"next_run_at"`
	}
	p.result07("queue/next_deadline", map[string]any{}, &next, false)
	if at, err := time.Parse(time.RFC3339Nano, next.NextRunAt); err != nil || !at.Equal(deferredTo) {
		t.Errorf("queue/next_deadline %q, want TASK-5's run_at %s", next.NextRunAt, deferredTo.Format(time.RFC3339))
	}
	p.expectQueue("before tick 2", queueStats{Total: 6, Pending: 5, Assigned: 1, Deferred: 1},
		map[string]string{"TASK-2": "assigned", "TASK-3": "pending", "TASK-4": "pending", "TASK-5": "pending",
			"TASK-7": "pending", "TASK-9": "pending"})

	// Tick 2: TASK-2 still runs, so four slots and one exclude fence.
	d1.heartbeat(fleet)
	f2 := fleet.tracked[ent["TASK-2"].EntryID]
	t2 := d1.tick(fleet)
	if t2.max != 4 {
		t.Errorf("tick 2: max %d, want 4", t2.max)
	}
	expectSubjects(t, "tick 2 started", t2.started, "task:TASK-3", "task:TASK-4", "task:TASK-7")
	if len(t2.blocked) != 1 || t2.blocked[0].EntryID != ent["TASK-9"].EntryID || t2.blocked[0].Reason != "repository_ref_collision" ||
		t2.blocked[0].ConflictsWith == nil || t2.blocked[0].ConflictsWith.Key() != f2.Key() {
		t.Errorf("tick 2 blocked %+v, want TASK-9 repository_ref_collision with TASK-2's fence %s", t2.blocked, f2.Key())
	}
	// Every v2 hand-out moves the lease generation, a put-back one's too;
	// d1.lease has already checked the put-back ones kept their workflow id.
	leaseGen := map[string]uint64{"task:TASK-3": 2, "task:TASK-4": 2, "task:TASK-7": 1}
	for _, f := range t2.started {
		if f.QueueLease.Generation != leaseGen[f.Subject.QualifiedID] {
			t.Errorf("tick 2 %s: lease generation %d, want %d", f.Subject.QualifiedID, f.QueueLease.Generation, leaseGen[f.Subject.QualifiedID])
		}
	}
	d1.heartbeat(fleet)

	// TASK-4 finishes and the old-style reconciler gets there first
	// (queue/list assigned + queue/completion); the daemon's own v2
	// completion then finds the finished record: already_applied.
	if n := p.reconcileCompletion("task:TASK-4", "completed"); n != 1 {
		t.Errorf("old-style reconciler completed %d entries of task:TASK-4, want 1", n)
	}
	if n := p.reconcileCompletion("task:TASK-4", "completed"); n != 0 {
		t.Errorf("second reconciler completed %d entries, want 0", n)
	}
	d1.finish(fleet, fleet.tracked[ent["TASK-4"].EntryID], "completed", "already_applied")
	p.expectQueue("after tick 2", queueStats{Total: 5, Pending: 2, Assigned: 3, Deferred: 1},
		map[string]string{"TASK-2": "assigned", "TASK-3": "assigned", "TASK-5": "pending", "TASK-7": "assigned", "TASK-9": "pending"})

	// The daemon's last heartbeat before it dies: the tickets it leaves
	// behind are fresh, so the early recovery below is certainly early.
	d1.heartbeat(fleet)
	p.restart07(d1, fleet, ent)
}

// restart07 is the daemon restart of TestDispatch07Tick: d1 dies with
// TASK-2, TASK-3 and TASK-7 running; a new daemon finishes TASK-2 with its
// stored ticket and recovers the other two once their tickets expire.
func (p *project) restart07(d1 *daemon07, fleet *localFleet, ent map[string]queuev2.EnqueueResponse) {
	t := p.t
	t.Helper()
	old := map[string]queuev2.ExecutionFence{}
	var latest time.Time
	for _, f := range fleet.tracked {
		old[f.Subject.QualifiedID] = f
		if f.Expiry().After(latest) {
			latest = f.Expiry()
		}
	}
	d2 := p.startDaemon07()

	// Too early: the old tickets are live, so recovery is refused without
	// changing anything.
	early := d2.mutate("queue/v2/lease/recover", map[string]any{"execution": old["task:TASK-3"], "new_owner_id": d2.owner})
	expect(t, "recover before expiry", early, "lease_still_live", "")
	if early.Execution == nil || early.Execution.Key() != old["task:TASK-3"].Key() {
		t.Errorf("lease_still_live execution %+v, want the current fence %s", early.Execution, old["task:TASK-3"].Key())
	}

	// A lease TTL expiry is a real wait: until the latest stored expiry.
	time.Sleep(time.Until(latest) + 50*time.Millisecond)

	// The old daemon's late heartbeat must not revive its ticket.
	m := d1.mutate("queue/v2/lease/renew", map[string]any{"execution": old["task:TASK-7"]})
	expect(t, "late renew by the dead owner", m, "stale_fence", "queue lease has expired and requires recovery")
	if m.Execution != nil {
		t.Errorf("stale renew answered with an execution %+v; §3.7 says none", *m.Execution)
	}

	// A tick before reconciliation: expired tickets are neither handed out
	// nor reported; TASK-9 is still blocked by TASK-2's expired ticket.
	restarted := newLocalFleet()
	for _, f := range old {
		restarted.tracked[f.EntryID()] = f
	}
	t3 := d2.tick(restarted)
	if t3.max != 5 || len(t3.started) != 0 || len(t3.blocked) != 1 || t3.blocked[0].EntryID != ent["TASK-9"].EntryID {
		t.Errorf("tick after restart: max %d, leased %v, blocked %+v; want 5, nothing, TASK-9 blocked", t3.max, ids(t3.started), t3.blocked)
	}

	// TASK-2 finished while the daemon was down: completed with its stored
	// old-owner expired ticket, no recovery first (§4.4).
	d2.finish(restarted, old["task:TASK-2"], "completed", "applied")
	// The others continue under the new owner.
	for _, s := range []string{"task:TASK-3", "task:TASK-7"} {
		restarted.tracked[old[s].EntryID()] = d2.recoverTicket(old[s])
	}
	third := p.startDaemon07()
	m = third.mutate("queue/v2/lease/recover", map[string]any{"execution": restarted.tracked[old["task:TASK-3"].EntryID()], "new_owner_id": third.owner})
	expect(t, "recover of a freshly recovered ticket", m, "lease_still_live", "")
	expect(t, "completion with the superseded ticket", d2.complete(old["task:TASK-3"], "completed"), "stale_fence", "")
	expect(t, "put-back with the superseded ticket", d2.releasePending(old["task:TASK-7"], "spawn-deferred"), "stale_fence", "")
	d2.heartbeat(restarted)

	// With TASK-2 done, TASK-9's branch is free.
	t4 := d2.tick(restarted)
	expectSubjects(t, "tick after recovery", t4.started, "task:TASK-9")
	p.expectQueue("after recovery", queueStats{Total: 4, Pending: 1, Assigned: 3, Deferred: 1},
		map[string]string{"TASK-3": "assigned", "TASK-5": "pending", "TASK-7": "assigned", "TASK-9": "assigned"})
	for _, s := range []string{"task:TASK-3", "task:TASK-7", "task:TASK-9"} {
		for _, f := range restarted.tracked {
			if f.Subject.QualifiedID == s {
				d2.finish(restarted, f, "completed", "applied")
			}
		}
	}
	// What is left is the deferred entry; the operator drops it. The
	// subject counter outlives the entries: TASK-1 comes back as gen 2.
	p.expectQueue("after completion", queueStats{Total: 1, Pending: 1, Deferred: 1}, map[string]string{"TASK-5": "pending"})
	p.cliBySubject("queue/drop", "TASK-5")
	if r := p.enqueue07("TASK-1", "cli-1-again", nil, ""); !r.Enqueued || r.Subject.Generation != 2 {
		t.Errorf("re-enqueue of a finished subject: %+v, want a new entry at generation 2", r)
	}
	p.expectQueue("at the end", queueStats{Total: 1, Pending: 1}, nil)
}

// enqueue07 is `animus queue enqueue` of a task subject: queue/v2/enqueue,
// requested_at = now on every attempt.
func (p *project) enqueue07(task, key string, repo *queuev2.RepositoryReservation, runAt string) queuev2.EnqueueResponse {
	p.t.Helper()
	params := map[string]any{"subject_dispatch": map[string]any{
		"requested_at":   time.Now().UTC().Format(time.RFC3339Nano),
		"subject":        map[string]any{"Task": map[string]any{"id": "task:" + task}},
		"trigger_source": "manual-queue-enqueue", "workflow_ref": "standard",
	}}
	if key != "" {
		params["idempotency_key"] = key
	}
	if repo != nil {
		params["repository"] = repo
	}
	if runAt != "" {
		params["run_at"], params["expire_after_secs"] = runAt, 3600
	}
	var r queuev2.EnqueueResponse
	p.result07("queue/v2/enqueue", params, &r, true)
	return r
}

// expectQueue checks queue/stats and queue/list (status per task; nil
// skips the list) as the CLI would print them.
func (p *project) expectQueue(when string, want queueStats, status map[string]string) {
	p.t.Helper()
	if got := p.stats07(); got != want {
		p.t.Errorf("%s: queue/stats %+v, want %+v", when, got, want)
	}
	if status == nil {
		return
	}
	l := p.list07()
	got := map[string]string{}
	for _, e := range l.Entries {
		got[strings.TrimPrefix(e.SubjectID, "task:")] = e.Status
	}
	if l.Stats != want || l.Total != len(status) || !maps.Equal(got, status) {
		p.t.Errorf("%s: queue/list statuses %v (total %d, stats %+v), want %v", when, got, l.Total, l.Stats, status)
	}
}

func expectSubjects(t *testing.T, what string, fs []queuev2.ExecutionFence, want ...string) {
	t.Helper()
	got := make([]string, len(fs))
	for i, f := range fs {
		got[i] = f.Subject.QualifiedID
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}
