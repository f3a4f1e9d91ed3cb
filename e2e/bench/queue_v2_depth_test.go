package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// seedV2Depth makes a project whose queue holds depth pending v2 entries.
// The plugin creates the schema (its own migrations) and writes the first
// entry through queue/v2/enqueue; the rest are cloned from that row in one
// statement per table, with the rows a v2 add writes: the entry (canonical
// id, subject generation 1, repository reservation and its collision key,
// a UUID-shaped id), its enqueue audit record and its subject counter.
// No idempotency key, so there is no binding to forge a request hash for.
// 100,000 entries take a few seconds; through the plugin they would take
// minutes of fsyncs.
func seedV2Depth(b *testing.B, depth int) string {
	b.Helper()
	dir := projectDir(b)
	callOnce(b, spawnQueue07, dir, "queue/v2/enqueue", enqueueV2Params(0, false))
	ctx := context.Background()
	db, err := sqlitex.Open(ctx, sqlitex.Options{Path: filepath.Join(dir, ".animus", "queue.sqlite")})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		return runStmts(ctx, tx,
			stmt(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
				INSERT INTO entries (entry_id, ordinal, state, subject_key, task_id, workflow_ref, enqueued_at,
					dispatch, qualified_id, subject_generation, lease_generation, repo_url, repo_base_ref,
					repo_head_ref, repo_collision_key)
				SELECT printf('00000000-0000-4000-8000-%012d', i), t.ordinal + i, 'pending', 'TASK-S' || i,
					'TASK-S' || i, t.workflow_ref, t.enqueued_at,
					replace(t.dispatch, '"TASK-0"', '"TASK-S' || i || '"'), 'task:TASK-S' || i, 1, 0,
					t.repo_url, t.repo_base_ref, replace(t.repo_head_ref, '/TASK-0', '/TASK-S' || i),
					replace(t.repo_collision_key, '/TASK-0', '/TASK-S' || i)
				FROM n, (SELECT * FROM entries LIMIT 1) t`, depth-1),
			stmt(`INSERT INTO audit (entry_id, subject_key, at, at_ns, method, from_status, to_status, workflow_id, reason)
				SELECT e.entry_id, e.subject_key, a.at, a.at_ns, a.method, NULL, 'pending', NULL, NULL
				FROM entries e, (SELECT * FROM audit LIMIT 1) a WHERE e.entry_id LIKE '00000000-0000-4000-8000-%'`),
			stmt(`INSERT INTO subject_generations (qualified_id, last_generation)
				SELECT qualified_id, 1 FROM entries WHERE entry_id LIKE '00000000-0000-4000-8000-%'`))
	})
	if err != nil {
		b.Fatalf("seeding %d entries: %v", depth, err)
	}
	var n int
	if err := db.QueryRow(`SELECT n FROM state_counts WHERE state = 'pending'`).Scan(&n); err != nil || n != depth {
		b.Fatalf("seeded %d entries, want %d (%v)", n, depth, err)
	}
	return dir
}

// depthSide is one queue depth: its project, a long-lived process that
// puts leased entries back (untimed) and the measured lease latencies.
type depthSide struct {
	depth         int
	dir           string
	keeper        *child
	perCall, kept []time.Duration
}

// putBack releases every leased entry to pending with its fence: it keeps
// its position and workflow id, so the depth and the head of the queue
// stay what they were.
func (s *depthSide) putBack(b *testing.B, l leasedV2) {
	for _, e := range l.Leased {
		res := mustResult(b, s.keeper.roundTrip(b, "queue/v2/release_pending", fenceParams(e.Execution, `,"reason":"spawn-deferred"`)))
		mustOutcome(b, "queue/v2/release_pending", res, "applied")
	}
}

// lease measures queue/v2/lease(batch) twice: in a fresh process, as the
// daemon's tick runs it, and in the kept process, which leaves the
// store's own work (the part that could grow with depth) without the
// process start that would otherwise drown it.
func (s *depthSide) lease(b *testing.B, batch int, tag string) {
	res, d := callOnce(b, spawnQueue07, s.dir, "queue/v2/lease", leaseV2Params(batch, tag+"p"))
	s.perCall = append(s.perCall, d)
	s.putBack(b, mustLeased(b, res, batch))
	t0 := time.Now()
	res = mustResult(b, s.keeper.roundTrip(b, "queue/v2/lease", leaseV2Params(batch, tag+"k")))
	s.kept = append(s.kept, time.Since(t0))
	s.putBack(b, mustLeased(b, res, batch))
}

func BenchmarkQueueV2LeaseDepth(b *testing.B) {
	sides := []*depthSide{{depth: 100}, {depth: 100_000}}
	for _, s := range sides {
		s.dir = seedV2Depth(b, s.depth)
		s.keeper = spawnQueue07(b, s.dir)
		defer s.keeper.shutdown(b)
	}
	round := 0
	leaseBoth := func() {
		round++
		batch := round%5 + 1 // the daemon's batch is min(drain, free slots, 5)
		for _, s := range sides {
			s.lease(b, batch, strconv.Itoa(round))
		}
	}
	for range 10 { // warm both files and processes
		leaseBoth()
	}
	for _, s := range sides {
		s.perCall, s.kept = nil, nil
	}
	for b.Loop() {
		leaseBoth()
	}
	for _, s := range sides {
		var st struct {
			Pending  int `json:"pending"`
			Assigned int `json:"assigned"`
		}
		res := mustResult(b, s.keeper.roundTrip(b, "queue/stats", `{}`))
		if json.Unmarshal(res, &st) != nil || st.Pending != s.depth || st.Assigned != 0 {
			b.Fatalf("depth %d drifted: %s", s.depth, res)
		}
	}
	small, big := sides[0], sides[1]
	name := func(s *depthSide) string {
		if s.depth >= 1000 {
			return fmt.Sprintf("depth%dk", s.depth/1000)
		}
		return fmt.Sprintf("depth%d", s.depth)
	}
	for _, s := range sides {
		b.ReportMetric(ms(percentile(s.perCall, 50)), name(s)+"-percall-p50-ms")
		b.ReportMetric(float64(percentile(s.kept, 50).Microseconds()), name(s)+"-kept-p50-µs")
		b.ReportMetric(float64(percentile(s.kept, 99).Microseconds()), name(s)+"-kept-p99-µs")
	}
	perCallRatio := float64(percentile(big.perCall, 50)) / float64(percentile(small.perCall, 50))
	keptRatio := float64(percentile(big.kept, 50)) / float64(percentile(small.kept, 50))
	b.ReportMetric(perCallRatio, "percall-p50-ratio")
	b.ReportMetric(keptRatio, "kept-p50-ratio")
	if keptRatio > 2 {
		b.Logf("queue/v2/lease at depth %d is %.2f× depth %d in the store (goal: within 2×)", big.depth, keptRatio, small.depth)
	}
}
