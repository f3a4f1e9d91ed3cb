package queue

import (
	"fmt"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// newHostFixture is newFixture with the handshake of a given daemon line.
func newHostFixture(t *testing.T, cfg testConfig, protocol, hostVersion string) *fixture {
	t.Helper()
	f := &fixture{t: t, cfg: cfg, dir: t.TempDir(), now: t0}
	f.s = New(cfg.options(t, Options{Now: func() time.Time { return f.now },
		NewID: func() string { f.ids++; return fmt.Sprintf("id-%d", f.ids) }}))
	hs := bound(rootBinding(f.dir))
	hs.ProtocolVersion, hs.HostVersion = protocol, hostVersion
	if err := f.serve(hs); err != nil {
		t.Fatal(err)
	}
	return f
}

// §5.4 (21), §6.7: queue/list pages by the host's line.
func TestListPagingByHost(t *testing.T) {
	tests := []struct {
		protocol, host string
		params         string
		want           int
	}{
		{"1.1.0", "0.6.33", ``, 2100},
		{"1.1.0", "0.6.33", `{"limit":0}`, 0},
		{"1.1.0", "0.7.0-rc.52", ``, 500},
		{"1.1.0", "0.7.0-rc.52", `{"limit":0}`, 1},
		{"1.1.0", "0.7.1", `{"limit":5000}`, 2000},
		{"1.2.0", "0.1.0", `{"limit":7}`, 7},
		{"1.1.0", "", ``, 2100},
	}
	f := newHostFixture(t, testConfig{}, "1.1.0", "0.6.33")
	f.h.OK(t, "queue/stats", "", nil) // creates the database
	f.rawExec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2100)
		INSERT INTO entries (entry_id, ordinal, state, subject_key, workflow_ref, enqueued_at, dispatch)
		SELECT 'e' || i, i, 'pending', 'T-' || i, 'w', 't', '{}' FROM n`)
	for _, tt := range tests {
		g := &fixture{t: t, dir: f.dir, now: t0, s: New(testConfig{}.options(t, Options{}))}
		hs := bound(rootBinding(f.dir))
		hs.ProtocolVersion, hs.HostVersion = tt.protocol, tt.host
		if err := g.serve(hs); err != nil {
			t.Fatal(err)
		}
		var r struct {
			Entries []wire.Entry `json:"entries"`
			Total   int          `json:"total"`
		}
		g.h.OK(t, "queue/list", tt.params, &r)
		if len(r.Entries) != tt.want || r.Total != 2100 {
			t.Errorf("%s/%s %s: %d entries, total %d; want %d", tt.protocol, tt.host, tt.params, len(r.Entries), r.Total, tt.want)
		}
	}
}

// §5.4 (21), §3.10: the old-style methods on a store with tickets.
func TestOldStyleBesideV2(t *testing.T) {
	f := newFixture(t, testConfig{Rules: Rules{LeaseTTL: time.Second}})
	a := f.addTask("T-1", "")
	f.want("queue/hold", `{"entry_id":"`+a+`"}`, `{"changed":true,"not_found":false}`)
	f.want("queue/release", `{"entry_id":"`+a+`"}`, `{"changed":true,"not_found":false}`)
	f.wantErr("queue/mark_assigned", `{"entry_id":"`+a+`"}`, CodeStaleFence,
		"queue entry "+a+" is owned by a generation-fenced lease; use queue/v2/*", nil)
	x := f.leaseOne("d")
	f.wantErr("queue/release_pending", `{"entry_id":"`+a+`","reason":"r"}`, CodeStaleFence, "use queue/v2/*", nil)
	f.wantErr("queue/hold", `{"entry_id":"`+a+`"}`, CodeEntryNotPending, "not in the expected pre-mutation status", nil)

	// Old-style lease never takes a ticketed entry, not even an expired one.
	f.now = f.now.Add(2 * DefaultTicketTTL)
	f.want("queue/lease", `{"max":5}`, `{"leased":[]}`)

	// Old-style completion of a ticketed entry, then v2 completion.
	f.want("queue/completion", `{"entry_id":"`+a+`","status":"completed"}`, `{"changed":true,"not_found":false}`)
	if r := f.completeT(x, "completed"); r.Outcome != wire.OutcomeAlreadyApplied {
		t.Errorf("v2 after old-style completion: %s", mustJSON(r))
	}
	// Drop of an assigned ticketed entry, then v2 completion.
	b := f.addTask("T-2", "")
	y := f.leaseOne("d")
	f.want("queue/drop", `{"entry_id":"`+b+`"}`, `{"changed":true,"not_found":false}`)
	if got := outcome(f.completeT(y, "completed")); got != "not_assigned: queue entry is dropped" {
		t.Errorf("v2 after drop: %s", got)
	}
	// reorder and next_deadline see ticketed entries.
	c := f.addTask("T-3", "")
	d := f.addTask("T-4", `,"run_at":"2030-01-01T00:00:00Z"`)
	f.want("queue/reorder", `{"entry_ids":["`+d+`","`+c+`"]}`, `{"reordered_count":2}`)
	f.want("queue/next_deadline", "", `{"next_run_at":"2030-01-01T00:00:00+00:00"}`)
}

// The old-style TTL ages a lease from assigned_at whoever leased it: an
// entry leased by a process without the setting is reclaimed by one with it.
func TestOldStyleReclaimAgesFromTheLease(t *testing.T) {
	f := newFixture(t, testConfig{})
	id := f.enqueue("T-1", "")
	f.h.OK(t, "queue/lease", `{"max":1,"workflow_ids":["crashed"]}`, nil)
	f.now = f.now.Add(time.Hour)
	later := &fixture{t: t, dir: f.dir, now: f.now}
	later.s = New(testConfig{Rules: Rules{LeaseTTL: 30 * time.Minute}}.options(t, Options{Now: func() time.Time { return later.now }}))
	if err := later.serve(bound(rootBinding(f.dir))); err != nil {
		t.Fatal(err)
	}
	var r struct{ Leased []wire.Entry }
	later.h.OK(t, "queue/lease", `{"max":1,"workflow_ids":["again"]}`, &r)
	if len(r.Leased) != 1 || r.Leased[0].EntryID != id || *r.Leased[0].WorkflowID != "again" {
		t.Errorf("not reclaimed: %s", mustJSON(r))
	}
	later.want("queue/lease", `{"max":1,"workflow_ids":["early"]}`, `{"leased":[]}`)
}
