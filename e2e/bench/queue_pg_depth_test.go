package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// BenchmarkQueuePGV2LeaseDepth: queue/v2/lease (max 1) and the
// queue/v2/release_pending that puts the entry back, through one
// long-lived animus-queue-postgres process per depth, at depth 100 and
// at a deep queue (1,000,000 pending entries; $ANIMUS_BENCH_PG_DEPTH sets
// another), interleaved. Goal: the deep lease within 2× of the shallow
// one. When it is not, the plans of the lease's candidate read at both
// depths are logged.
//
// Each queue is filled by SQL in one transaction (see fillPGDepth) and
// kept for the rest of the test binary's run, so -count N fills it once;
// TestMain drops it at the end.

// envPGDepth overrides the deep side's depth.
const envPGDepth = "ANIMUS_BENCH_PG_DEPTH"

const defaultPGDeepDepth = 1_000_000

// pgDepthQueue is a filled namespace and the project root its plugin
// processes are bound to.
type pgDepthQueue struct {
	q   pgns.NS
	dir string
}

// pgDepths caches the filled namespaces of this test binary's run.
var pgDepths = struct {
	sync.Mutex
	byDepth map[int]pgDepthQueue
}{byDepth: map[int]pgDepthQueue{}}

// TestMain drops what the benchmarks kept for the whole run (the filled
// namespaces of BenchmarkQueuePGV2LeaseDepth and
// BenchmarkDurablePGRecoverInFlight1M).
func TestMain(m *testing.M) {
	code := m.Run()
	pgDepths.Lock()
	for _, d := range pgDepths.byDepth {
		if err := pgExec1(d.q.DSN, "DROP SCHEMA IF EXISTS "+d.q.Schema+" CASCADE"); err != nil {
			fmt.Fprintf(os.Stderr, "bench: drop schema %s: %v\n", d.q.Schema, err)
		}
		os.RemoveAll(d.dir)
	}
	pgDepths.Unlock()
	dropDurablePGFilled()
	os.Exit(code)
}

func pgExec1(dsn, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql)
	return err
}

// pgDepth returns a namespace holding depth pending v2 entries, filled on
// first use in this run.
func pgDepth(b *testing.B, depth int) pgDepthQueue {
	b.Helper()
	dsn := pgtest.DSN(b)
	pgDepths.Lock()
	defer pgDepths.Unlock()
	if d, ok := pgDepths.byDepth[depth]; ok {
		return d
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	d := pgDepthQueue{q: pgns.NS{Plugin: pgns.Queue, DSN: dsn, Schema: fmt.Sprintf("bench_depth_%d_%s", depth, hex.EncodeToString(r[:]))}}
	dir, err := os.MkdirTemp("", "bench-pgdepth-")
	if err == nil {
		d.dir, err = filepath.EvalSymlinks(dir)
	}
	if err != nil {
		b.Fatal(err)
	}
	if err := pgExec1(dsn, "CREATE SCHEMA "+d.q.Schema); err != nil {
		os.RemoveAll(d.dir)
		b.Fatal(err)
	}
	pgDepths.byDepth[depth] = d // from here on TestMain drops it
	t0 := time.Now()
	fillPGDepth(b, d, depth)
	b.Logf("filled %s with %d pending entries in %v", d.q.Schema, depth, time.Since(t0).Round(time.Millisecond))
	return d
}

// fillPGDepth makes the namespace hold depth pending v2 entries. The
// plugin creates the schema (its own migration) and writes the first
// entry through queue/v2/enqueue; the rest are cloned from that row with
// one INSERT … SELECT generate_series per table, with the rows a v2 add
// writes (as seedV2Depth does for SQLite): the entry (canonical id,
// subject generation 1, repository reservation and its collision key, a
// UUID-shaped id, the project root), its enqueue audit record and its
// subject counter. The per-row state_counts trigger is disabled for the
// bulk insert (one UPDATE of one row per entry would dominate the fill)
// and the count set once, in the same transaction. VACUUM ANALYZE then
// leaves the tables as autovacuum would: statistics, hint bits and the
// visibility map set.
func fillPGDepth(b *testing.B, d pgDepthQueue, depth int) {
	b.Helper()
	callOnce(b, pgSpawner(b, d.q), d.dir, "queue/v2/enqueue", enqueueV2Params(0, false))
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(d.q.DSN)
	if err != nil {
		b.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = d.q.Schema
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	const seeded = `'00000000-0000-4000-8000-%'`
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		return pgExec(ctx, tx,
			stmt(`ALTER TABLE entries DISABLE TRIGGER entries_count_insert_delete`),
			stmt(`INSERT INTO entries (entry_id, ordinal, state, subject_key, task_id, workflow_ref, enqueued_at,
					dispatch, qualified_id, subject_generation, lease_generation, repo_url, repo_base_ref,
					repo_head_ref, repo_collision_key, project_root)
				SELECT '00000000-0000-4000-8000-' || lpad(i::text, 12, '0'), t.ordinal + i, 'pending', 'TASK-S' || i,
					'TASK-S' || i, t.workflow_ref, t.enqueued_at,
					replace(t.dispatch, '"TASK-0"', '"TASK-S' || i || '"'), 'task:TASK-S' || i, 1, 0,
					t.repo_url, t.repo_base_ref, replace(t.repo_head_ref, '/TASK-0', '/TASK-S' || i),
					replace(t.repo_collision_key, '/TASK-0', '/TASK-S' || i), t.project_root
				FROM generate_series(1, $1::bigint) i, (SELECT * FROM entries LIMIT 1) t`, depth-1),
			stmt(`INSERT INTO audit (entry_id, subject_key, at, at_ns, method, from_status, to_status, workflow_id, reason)
				SELECT e.entry_id, e.subject_key, a.at, a.at_ns, a.method, NULL, 'pending', NULL, NULL
				FROM entries e, (SELECT * FROM audit LIMIT 1) a WHERE e.entry_id LIKE `+seeded),
			stmt(`INSERT INTO subject_generations (qualified_id, last_generation)
				SELECT qualified_id, 1 FROM entries WHERE entry_id LIKE `+seeded),
			stmt(`UPDATE state_counts SET n = (SELECT COUNT(*) FROM entries WHERE state = 'pending') WHERE state = 'pending'`),
			stmt(`ALTER TABLE entries ENABLE TRIGGER entries_count_insert_delete`))
	})
	if err != nil {
		b.Fatalf("filling %d entries: %v", depth, err)
	}
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) entries, audit, subject_generations, state_counts`); err != nil {
		b.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT n FROM state_counts WHERE state = 'pending'`).Scan(&n); err != nil || n != depth {
		b.Fatalf("filled %d entries, want %d (%v)", n, depth, err)
	}
}

// pgDepthSide is one depth: its long-lived process and its latencies.
type pgDepthSide struct {
	depth          int
	d              pgDepthQueue
	keeper         *child
	lease, release []time.Duration
	cycle          []time.Duration
}

// leaseOnce times queue/v2/lease(1) and the release_pending that puts
// the entry back at its position (pending, same workflow id), so the depth
// and the head of the queue stay what they were.
func (s *pgDepthSide) leaseOnce(b *testing.B, tag string) {
	t0 := time.Now()
	res := mustResult(b, s.keeper.roundTrip(b, "queue/v2/lease", leaseV2Params(1, tag)))
	t1 := time.Now()
	l := mustLeased(b, res, 1)
	t2 := time.Now()
	res = mustResult(b, s.keeper.roundTrip(b, "queue/v2/release_pending", fenceParams(l.Leased[0].Execution, `,"reason":"spawn-deferred"`)))
	t3 := time.Now()
	mustOutcome(b, "queue/v2/release_pending", res, "applied")
	s.lease = append(s.lease, t1.Sub(t0))
	s.release = append(s.release, t3.Sub(t2))
	s.cycle = append(s.cycle, t1.Sub(t0)+t3.Sub(t2))
}

func (s *pgDepthSide) name() string {
	switch {
	case s.depth >= 1_000_000 && s.depth%1_000_000 == 0:
		return fmt.Sprintf("depth%dM", s.depth/1_000_000)
	case s.depth >= 1000 && s.depth%1000 == 0:
		return fmt.Sprintf("depth%dk", s.depth/1000)
	}
	return fmt.Sprintf("depth%d", s.depth)
}

func BenchmarkQueuePGV2LeaseDepth(b *testing.B) {
	deep := defaultPGDeepDepth
	if v := os.Getenv(envPGDepth); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want a positive number of entries", envPGDepth, v)
		}
		deep = n
	}
	sides := []*pgDepthSide{{depth: 100}, {depth: deep}}
	for _, s := range sides {
		s.d = pgDepth(b, s.depth)
		s.keeper = pgSpawner(b, s.d.q)(b, s.d.dir)
		defer s.keeper.shutdown(b)
	}
	round := 0
	leaseBoth := func() {
		round++
		for _, s := range sides {
			s.leaseOnce(b, strconv.Itoa(round))
		}
	}
	for range 20 { // connections, statement caches, the head pages
		leaseBoth()
	}
	for _, s := range sides {
		s.lease, s.release, s.cycle = nil, nil, nil
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
			b.Fatalf("%s drifted: %s", s.name(), res)
		}
	}
	for _, s := range sides {
		b.ReportMetric(float64(percentile(s.lease, 50).Microseconds()), s.name()+"-lease-p50-µs")
		b.ReportMetric(float64(percentile(s.lease, 99).Microseconds()), s.name()+"-lease-p99-µs")
		b.ReportMetric(float64(percentile(s.release, 50).Microseconds()), s.name()+"-release-p50-µs")
		b.ReportMetric(float64(percentile(s.cycle, 50).Microseconds()), s.name()+"-cycle-p50-µs")
	}
	small, big := sides[0], sides[1]
	leaseRatio := float64(percentile(big.lease, 50)) / float64(percentile(small.lease, 50))
	cycleRatio := float64(percentile(big.cycle, 50)) / float64(percentile(small.cycle, 50))
	b.ReportMetric(leaseRatio, "lease-p50-ratio")
	b.ReportMetric(cycleRatio, "cycle-p50-ratio")
	if leaseRatio > 2 || cycleRatio > 2 {
		b.Logf("queue/v2/lease at %s is %.2f× (lease+release %.2f×) %s (goal: within 2×); candidate read plans:",
			big.name(), leaseRatio, cycleRatio, small.name())
		for _, s := range sides {
			b.Logf("%s:\n%s", s.name(), explainCandidates(b, s.d.q))
		}
	}
}

// explainCandidates is EXPLAIN (ANALYZE, BUFFERS) of the lease's candidate
// read as pgstore runs it (rows locked), in a transaction rolled back.
func explainCandidates(b *testing.B, q pgns.NS) string {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(q.DSN)
	if err != nil {
		b.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = q.Schema
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback(ctx)
	rows, err := pgRows(ctx, tx, `EXPLAIN (ANALYZE, BUFFERS) `+rawPGV2Candidates, time.Now().UnixNano(), int64(50))
	if err != nil {
		b.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprint(r[0]))
	}
	return strings.Join(lines, "\n")
}
