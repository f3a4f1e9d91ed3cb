package queue

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

func repoOf(head string) string {
	return `,"repository":{"repository":"https://github.com/acme/app.git","base_ref":"refs/heads/main","head_ref":"refs/heads/` + head + `"}`
}

// §5.4 (10): fences, TTL, workflow ids in order, the batch limit, and
// refusals that change nothing.
func TestV2LeaseHandOut(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  testConfig
		ttl  time.Duration
	}{
		{"default TTL", testConfig{}, 1800 * time.Second},
		{"configured TTL", testConfig{Rules: Rules{TicketTTL: 60 * time.Second}}, 60 * time.Second},
		{"out of range TTL", testConfig{Rules: Rules{TicketTTL: 604801 * time.Second}}, 1800 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.cfg)
			for i := 1; i <= 6; i++ {
				f.addTask(fmt.Sprintf("T-%d", i), repoOf(fmt.Sprintf("b%d", i)))
			}
			r := f.leaseV2(5, " daemon-a ")
			if len(r.Leased) != 5 || len(r.Blocked) != 0 {
				t.Fatalf("leased %d blocked %d", len(r.Leased), len(r.Blocked))
			}
			for i, item := range r.Leased {
				validFenced(t, item, "daemon-a")
				x := item.Execution
				if x.WorkflowID != fmt.Sprintf("wf-%d", i+1) || x.QueueLease.Generation != 1 || x.Repository == nil ||
					x.Subject.QualifiedID != fmt.Sprintf("task:T-%d", i+1) {
					t.Errorf("item %d: %s", i, mustJSON(x))
				}
				if want := rustjson.TimeZ(t0.Add(tt.ttl)); x.QueueLease.ExpiresAt != want {
					t.Errorf("expires_at %s, want %s", x.QueueLease.ExpiresAt, want)
				}
			}
		})
	}
	f := newFixture(t, testConfig{})
	f.addTask("T-1", "")
	fence := wire.ExecutionFence{Schema: "bogus", Version: 1, WorkflowID: "w", WorkflowGeneration: 1}
	for _, tt := range []struct{ params, msg string }{
		{`{"max":6,"owner_id":"d","workflow_ids":["1","2","3","4","5","6"]}`, "queue v2 lease requires max 1..5, owner_id, and max unique workflow_ids"},
		{`{"max":0,"owner_id":"d","workflow_ids":[]}`, "queue lease max must be greater than zero"},
		{`{"max":1,"owner_id":" ","workflow_ids":["1"]}`, "queue lease owner_id must not be empty"},
		{`{"max":2,"owner_id":"d","workflow_ids":["1"]}`, "workflow_ids length 1 did not match max 2"},
		{`{"max":2,"owner_id":"d","workflow_ids":["1","1"]}`, "workflow_ids must be non-empty and unique"},
		{`{"max":1,"owner_id":"d","workflow_ids":[""]}`, "workflow_ids must be non-empty and unique"},
		{`{"max":1,"owner_id":"d","workflow_ids":["1"],"exclude":[` + mustJSON(fence) + `]}`, "unsupported execution fence schema 'bogus'; expected 'animus.execution-fence.v1'"},
	} {
		f.wantErr("queue/v2/lease", tt.params, -32602, tt.msg, nil)
	}
	if got := f.listed(); got != "task:T-1:pending" {
		t.Errorf("after refusals: %s", got)
	}
}

// §5.4 (11): what is skipped, what blocks.
func TestV2LeaseSkipsAndBlocks(t *testing.T) {
	f := newFixture(t, testConfig{Rules: Rules{TicketTTL: 10 * time.Second}})
	held := f.addTask("T-1", "")
	f.h.OK(t, "queue/hold", `{"entry_id":"`+held+`"}`, nil)
	f.addTask("T-2", `,"run_at":"2030-01-01T00:00:00Z"`)
	f.addTask("T-3", "")
	x3 := f.leaseOne("d")
	f.now = f.now.Add(time.Minute) // T-3's ticket expired
	f.addTask("T-4", "")
	if r := f.leaseV2(5, "d"); len(r.Leased) != 1 || r.Leased[0].Entry.SubjectID != "task:T-4" || len(r.Blocked) != 0 {
		t.Errorf("lease: %s", mustJSON(r))
	}
	f.completeT(x3, "completed")

	// An exclude fence with the entry's subject generation blocks it.
	f.addTask("T-5", "")
	gen1 := wire.ExecutionFence{Schema: wire.FenceSchema, Version: 1, WorkflowID: "x", WorkflowGeneration: 1,
		Subject: &wire.SubjectGeneration{Generation: 1, QualifiedID: "task:T-5"}}
	r := f.leaseV2(1, "d", gen1)
	if len(r.Leased) != 0 || len(r.Blocked) != 1 || r.Blocked[0].Reason != wire.BlockSubjectGenerationActive ||
		mustJSON(r.Blocked[0].ConflictsWith) != mustJSON(gen1) {
		t.Errorf("same generation: %s", mustJSON(r))
	}
	gen1.Subject.Generation = 2
	if r := f.leaseV2(1, "d", gen1); len(r.Leased) != 1 || r.Leased[0].Execution.QueueLease.Generation != 1 {
		t.Errorf("other generation: %s", mustJSON(r))
	}
}

// §5.4 (12): repository/head-ref collisions.
func TestV2LeaseBranchCollisions(t *testing.T) {
	f := newFixture(t, testConfig{})
	f.addTask("T-1", repoOf("x"))
	other := wire.ExecutionFence{Schema: wire.FenceSchema, Version: 1, WorkflowID: "y", WorkflowGeneration: 1,
		Repository: &wire.RepositoryReservation{Repository: " HTTPS://GITHUB.COM/ACME/APP.GIT", BaseRef: "refs/heads/dev", HeadRef: "refs/heads/x"}}
	r := f.leaseV2(1, "d", other)
	if len(r.Blocked) != 1 || r.Blocked[0].Reason != wire.BlockRepositoryRefCollision || mustJSON(r.Blocked[0].ConflictsWith) != mustJSON(other) {
		t.Errorf("via exclude: %s", mustJSON(r))
	}
	running := f.leaseOne("d")
	f.addTask("T-2", repoOf("x"))
	r = f.leaseV2(1, "d")
	if len(r.Leased) != 0 || len(r.Blocked) != 1 || mustJSON(r.Blocked[0].ConflictsWith) != mustJSON(running) {
		t.Errorf("via a running entry: %s", mustJSON(r))
	}
	f.completeT(running, "completed")
	f.addTask("T-3", repoOf("x"))
	r = f.leaseV2(2, "d")
	if len(r.Leased) != 1 || len(r.Blocked) != 1 || mustJSON(r.Blocked[0].ConflictsWith) != mustJSON(r.Leased[0].Execution) {
		t.Errorf("within one call: %s", mustJSON(r))
	}

	// A free entry behind 50 blocked ones waits for a later call.
	g := newFixture(t, testConfig{})
	for i := range 51 {
		g.addTask(fmt.Sprintf("B-%d", i), repoOf("busy"))
	}
	g.leaseOne("d") // B-0 holds the branch
	free := g.addTask("FREE", "")
	r = g.leaseV2(1, "d")
	if len(r.Leased) != 0 || len(r.Blocked) != 50 {
		t.Errorf("window: leased %d blocked %d", len(r.Leased), len(r.Blocked))
	}
	for range 50 {
		g.h.OK(t, "queue/drop", `{"entry_id":"`+r.Blocked[0].EntryID+`"}`, nil)
		r.Blocked = r.Blocked[1:]
	}
	if r := g.leaseV2(1, "d"); len(r.Leased) != 1 || r.Leased[0].Entry.EntryID != free {
		t.Errorf("free entry later: %s", mustJSON(r))
	}
}

// §5.4 (13): identity at first hand-out.
func TestV2LeaseIdentity(t *testing.T) {
	f := newFixture(t, testConfig{})
	a := f.enqueue("T-1", "")
	b := f.enqueue("T-1", "") // old-style duplicate
	f.enqueue("linear.issue::ENG-7", "")
	r := f.leaseV2(3, "d")
	if len(r.Leased) != 3 {
		t.Fatalf("lease: %s", mustJSON(r))
	}
	want := []struct {
		id  string
		gen uint64
	}{{a, 1}, {b, 2}}
	for i, w := range want {
		x := r.Leased[i].Execution
		if r.Leased[i].Entry.EntryID != w.id || x.Subject.Generation != w.gen || x.Repository != nil {
			t.Errorf("copy %d: %s", i, mustJSON(r.Leased[i]))
		}
	}
	if got := r.Leased[2].Entry.SubjectID; got != "linear.issue:ENG-7" {
		t.Errorf("canonical id of a generic kind: %s", got)
	}
	// A put-back entry keeps its workflow id and leaves the fresh id for
	// the next entry.
	f.putBackT(r.Leased[0].Execution)
	f.addTask("T-9", "")
	r2 := f.leaseV2(2, "d2")
	if len(r2.Leased) != 2 || r2.Leased[0].Execution.WorkflowID != r.Leased[0].Execution.WorkflowID ||
		r2.Leased[1].Execution.WorkflowID != fmt.Sprintf("wf-%d", f.wfs-1) {
		t.Errorf("workflow ids: %s", mustJSON(r2))
	}
}

// §5.4 (13): an entry that cannot be identified is blocked, the rest
// still lease.
func TestV2LeaseMissingIdentity(t *testing.T) {
	f := newFixture(t, testConfig{})
	bad := f.enqueue("T-1", "")
	f.rawExec(`UPDATE entries SET dispatch = '{}', qualified_id = NULL WHERE entry_id = ?`, bad)
	f.addTask("T-2", "")
	r := f.leaseV2(2, "d")
	if len(r.Leased) != 1 || len(r.Blocked) != 1 || r.Blocked[0].Reason != wire.BlockMissingExecutionIdentity ||
		r.Blocked[0].ConflictsWith != nil || r.Blocked[0].EntryID != bad {
		t.Errorf("lease: %s", mustJSON(r))
	}
	if !strings.Contains(f.listed(), "T-1:pending") {
		t.Errorf("blocked entry changed: %s", f.listed())
	}
}
