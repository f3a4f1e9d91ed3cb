package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// Benchmarks of animus-durable-sqlite through the built binary
// (synchronous=FULL, WAL, BEGIN IMMEDIATE, as shipped).

const durableBinary = "animus-durable-sqlite"

// durableHandshake sends the agent runner's initialize, bound to the
// child's working directory, and registers run "bench"/"p".
func durableHandshake(tb testing.TB, c *child) {
	tb.Helper()
	resp := c.roundTrip(tb, "initialize", fmt.Sprintf(`{"capabilities":{"cancellation":true,"progress":false,"streaming":false},"host_info":{"name":"animus-agent-runner","version":"bench"},"init_extensions":{"project_binding":{"project_root":%q,"repo_scope":"bench"}},"protocol_version":"1.1.0"}`, c.cmd.Dir))
	if !bytes.Contains(resp, []byte(`"durable_store"`)) {
		tb.Fatalf("initialize: %s", resp)
	}
	if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","method":"initialized"}`+"\n"); err != nil {
		tb.Fatal(err)
	}
	durableOK(tb, c, "durable/begin_workflow_run", `{"run_id":"bench","phase_id":"p"}`)
}

// durableOK is a round trip that must not answer an error.
func durableOK(tb testing.TB, c *child, method, params string) []byte {
	resp := c.roundTrip(tb, method, params)
	if bytes.Contains(resp, []byte(`"error":`)) {
		tb.Fatalf("%s: %s", method, resp)
	}
	return resp
}

var stepIDPattern = regexp.MustCompile(`"step_id":"([^"]+)"`)

// durableDBPath is where the plugin keeps its file inside a child's project.
func durableDBPath(c *child) string {
	return filepath.Join(c.cmd.Dir, ".animus", "durable.sqlite")
}

// BenchmarkDurableBeginCommit measures exactly-once step pairs: begin_step
// (a new reservation) then commit_step, each its own durable transaction,
// through the plugin process; and, interleaved pair by pair in the same run,
// the same two write transactions issued straight to SQLite from this
// process on a file with the same schema and pragmas (WAL,
// synchronous=FULL, BEGIN IMMEDIATE). Reported: pairs per second for each,
// their ratio (plugin/raw, from the means and from the medians), and latency
// percentiles.
func BenchmarkDurableBeginCommit(b *testing.B) {
	bin := binaries.Path(b, durableBinary)
	plugin := spawn(b, bin)
	durableHandshake(b, plugin)

	// The raw side gets its schema from the plugin itself, so both files are
	// identical; that plugin then exits and leaves the file to the raw side.
	seed := spawn(b, bin)
	durableHandshake(b, seed)
	seed.in.Close()
	_ = seed.cmd.Wait()
	raw, err := sqlitex.Open(context.Background(), sqlitex.Options{Path: durableDBPath(seed), Synchronous: sqlitex.SyncFull, BusyTimeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	ctx := context.Background()

	for i := range 50 { // warm both up
		durablePair(b, plugin, fmt.Sprintf("warm-%d", i))
		rawPair(b, ctx, raw, fmt.Sprintf("warm-%d", i))
	}
	var pk, rw []time.Duration
	n := 0
	for b.Loop() {
		key := fmt.Sprintf("bench:%d", n)
		n++
		t0 := time.Now()
		durablePair(b, plugin, key)
		t1 := time.Now()
		rawPair(b, ctx, raw, key)
		pk = append(pk, t1.Sub(t0))
		rw = append(rw, time.Since(t1))
	}
	pluginRate, rawRate := rate(pk), rate(rw)
	b.ReportMetric(pluginRate, "plugin-pairs/s")
	b.ReportMetric(rawRate, "raw-pairs/s")
	b.ReportMetric(pluginRate/rawRate, "ratio")
	// The mean carries every scheduling stall of a shared machine; the
	// median ratio is the steadier comparison of the two paths.
	b.ReportMetric(float64(percentile(rw, 50))/float64(percentile(pk, 50)), "ratio-p50")
	b.ReportMetric(float64(percentile(pk, 50).Microseconds()), "plugin-p50-µs")
	b.ReportMetric(float64(percentile(pk, 99).Microseconds()), "plugin-p99-µs")
	b.ReportMetric(float64(percentile(rw, 50).Microseconds()), "raw-p50-µs")
	b.ReportMetric(float64(percentile(rw, 99).Microseconds()), "raw-p99-µs")
}

func durablePair(tb testing.TB, c *child, key string) {
	resp := durableOK(tb, c, "durable/begin_step", `{"run_id":"bench","phase_id":"p","step_name":"`+key+`","idempotency_key":"`+key+`"}`)
	m := stepIDPattern.FindSubmatch(resp)
	if m == nil || !bytes.Contains(resp, []byte(`"status":"new"`)) {
		tb.Fatalf("begin_step: %s", resp)
	}
	durableOK(tb, c, "durable/commit_step", `{"step_id":"`+string(m[1])+`","outcome":"success","output":{"text":"ok","tokens":12}}`)
}

// rawPair is what the plugin's store does for one pair, statement for
// statement (the same SQL text, the same bound values, a step id of the
// same shape), without the protocol around it.
func rawPair(tb testing.TB, ctx context.Context, db *sqlitex.DB, key string) {
	var rnd [16]byte
	_, _ = rand.Read(rnd[:])
	id := "step_" + hex.EncodeToString(rnd[:])
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE run_id = ? AND phase_id = ?`, "bench", "p").Scan(&one); err != nil {
			return err
		}
		var (
			held, run, phase, name, state string
			reserved, exp                 int64
			outcome, output, errout       sql.NullString
		)
		err := tx.QueryRowContext(ctx, `
		SELECT step_id, run_id, phase_id, step_name, state, reserved_at, expires_at, outcome, output_json, error_json
		FROM steps WHERE idempotency_key = ? AND state IN ('reserved', 'committed')`, key).Scan(
			&held, &run, &phase, &name, &state, &reserved, &exp, &outcome, &output, &errout)
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("key %s not free: %v", key, err)
		}
		now := time.Now().UnixNano()
		_, err = tx.ExecContext(ctx, `
		INSERT INTO steps (step_id, run_id, phase_id, step_name, idempotency_key, state, payload_json, reserved_at, expires_at)
		VALUES (?, ?, ?, ?, ?, 'reserved', ?, ?, ?)`,
			id, "bench", "p", key, key, nil, now, now+int64(300*time.Second))
		return err
	})
	if err == nil {
		err = db.Tx(ctx, func(tx *sql.Tx) error {
			var state string
			if err := tx.QueryRowContext(ctx, `SELECT state FROM steps WHERE step_id = ?`, id).Scan(&state); err != nil {
				return err
			}
			var seq int64
			if err := tx.QueryRowContext(ctx,
				`UPDATE meta SET last_commit_seq = last_commit_seq + 1 WHERE id = 1 RETURNING last_commit_seq`).Scan(&seq); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `
		UPDATE steps SET state = 'committed', outcome = ?, output_json = ?, error_json = ?,
			committed_at = ?, commit_seq = ?
		WHERE step_id = ? AND state = 'reserved'`,
				"success", `{"text":"ok","tokens":12}`, nil, time.Now().UnixNano(), seq, id)
			return err
		})
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkDurableRecoverInFlight1M measures durable/recover_in_flight
// {"since_epoch":0} through the plugin on a file holding 1,000,000
// committed steps (10,000 runs of 100 steps) and 100 runs with an
// outstanding reservation. The rows are seeded with SQL in one transaction
// before the measured plugin process starts, as after a daemon restart.
func BenchmarkDurableRecoverInFlight1M(b *testing.B) {
	const runs, stepsPerRun, open = 10_000, 100, 100
	bin := binaries.Path(b, durableBinary)
	schema := spawn(b, bin)
	durableHandshake(b, schema) // creates the schema
	schema.in.Close()
	_ = schema.cmd.Wait()
	seeding := time.Now()
	seedSteps(b, durableDBPath(schema), runs, stepsPerRun, open)
	b.Logf("seeded %d committed steps in %v", runs*stepsPerRun, time.Since(seeding).Round(time.Millisecond))

	plugin := start(b, bin, schema.cmd.Dir)
	b.Cleanup(plugin.stop)
	durableHandshake(b, plugin)
	resp := durableOK(b, plugin, "durable/recover_in_flight", `{"since_epoch":0}`)
	if got := bytes.Count(resp, []byte(`"run_id":`)); got != open {
		b.Fatalf("recover_in_flight lists %d runs, want %d", got, open)
	}
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		plugin.roundTrip(b, "durable/recover_in_flight", `{"since_epoch":0}`)
		lat = append(lat, time.Since(t0))
	}
	b.ReportMetric(float64(percentile(lat, 50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(resp)), "reply-bytes")
}

// seedSteps writes runs×perRun committed steps and one outstanding
// reservation in each of the first `open` runs, with the plugin's schema,
// in one transaction, and moves the counters past them.
func seedSteps(tb testing.TB, path string, runs, perRun, open int) {
	db, err := sqlitex.Open(context.Background(), sqlitex.Options{Path: path, MaxConns: 1})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	t0 := time.Now().Add(-time.Hour).UnixNano()
	total := runs * perRun
	err = db.Tx(context.Background(), func(tx *sql.Tx) error {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`PRAGMA cache_size = -262144`, nil},
			{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
				INSERT INTO runs (run_id, phase_id, epoch, inputs_json, created_at, updated_at)
				SELECT printf('run-%05d', i), 'p', i + 2, NULL, ?, ? FROM n`, []any{runs, t0, t0}},
			{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
				INSERT INTO steps (step_id, run_id, phase_id, step_name, idempotency_key, state, reserved_at, expires_at,
					outcome, output_json, committed_at, commit_seq)
				SELECT printf('seed_%08d', i), printf('run-%05d', i / ?), 'p', printf('%d', i % ?),
					printf('scope:run-%05d:p:%d', i / ?, i % ?), 'committed', ? + i, ? + i + 300000000000,
					'success', '{"text":"a recorded model reply","usage":{"input_tokens":1200,"output_tokens":300}}', ? + i, i + 2
				FROM n`, []any{total, perRun, perRun, perRun, perRun, t0, t0, t0}},
			{`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
				INSERT INTO steps (step_id, run_id, phase_id, step_name, idempotency_key, state, reserved_at, expires_at)
				SELECT printf('open_%08d', i), printf('run-%05d', i), 'p', 'open', printf('scope:run-%05d:p:open', i),
					'reserved', ?, ? FROM n`, []any{open, t0, time.Now().Add(24 * time.Hour).UnixNano()}},
			{`UPDATE meta SET last_epoch = ?, last_commit_seq = ?`, []any{runs + 1, total + 1}},
		} {
			if _, err := tx.Exec(q.sql, q.args...); err != nil {
				return fmt.Errorf("%.60s: %w", q.sql, err)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}
