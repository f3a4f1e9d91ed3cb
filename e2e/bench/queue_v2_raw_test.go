package bench

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// rawV2 runs, through database/sql on the plugin's driver and pragmas
// (sqlitex: WAL, synchronous=FULL, busy timeout, BEGIN IMMEDIATE, as
// store.Open sets them), the statements pkg/queuekit/sqlitestore
// runs for each queue/v2 call of the cycle, each call one transaction:
// the floor under the plugin, without the process, the protocol, JSON,
// validation, the dispatch codec or the request hash.
//
// perCall mirrors the process model: each call opens the file, reads
// user_version (store.Open's migration check on a current file), runs its
// transaction and closes; otherwise one connection pool is kept.
type rawV2 struct {
	path string
	kept *sqlitex.DB // nil: open per call
}

// newRawV2 makes a project whose schema the plugin created (newRawQueue
// starts it once), so the statements run against exactly its tables.
func newRawV2(b *testing.B, perCall bool) *rawV2 {
	b.Helper()
	db := newRawQueue(b).db
	if v, err := db.Version(context.Background()); err != nil || v < 2 {
		b.Fatalf("%s created schema version %d (%v): no v2 tables to mirror; build the v2 plugin", queueBinary, v, err)
	}
	r := &rawV2{path: db.Path, kept: db}
	if perCall {
		r.kept = nil
		db.Close()
	}
	return r
}

// call runs fn as one plugin call would and returns its wall time.
func (r *rawV2) call(b *testing.B, what string, fn func(ctx context.Context, tx *sql.Tx) error) time.Duration {
	ctx := context.Background()
	t0 := time.Now()
	db := r.kept
	if db == nil {
		var err error
		db, err = sqlitex.Open(ctx, sqlitex.Options{Path: r.path, BusyTimeout: 5 * time.Second, Synchronous: sqlitex.SyncFull, MaxConns: 4})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.Version(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Tx(ctx, func(tx *sql.Tx) error { return fn(ctx, tx) }); err != nil {
		b.Fatalf("raw %s: %v", what, err)
	}
	if r.kept == nil {
		db.Close() // part of the call: a process closes its file on exit
	}
	return time.Since(t0)
}

// The mirrored statements, named after the store function each comes
// from (pkg/queuekit/sqlitestore, schema 2).
const (
	rawV2Columns = rawEntryColumns + `, assigned_at_ns, qualified_id, subject_generation,
	workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url,
	repo_base_ref, repo_head_ref, repo_collision_key`
	// SweepExpired: its first statement; the other two run only when it
	// moved rows, and nothing in these queues is deferred.
	rawSweepAudit = `INSERT INTO audit (entry_id, subject_key, at, at_ns, method,
			from_status, to_status, workflow_id, reason)
		SELECT entry_id, subject_key, ?, ?, ?, 'pending', 'expired', NULL, 'expire_after_secs elapsed after run_at'
		FROM entries WHERE state = 'pending' AND expire_at_ns < ?`
	rawGetBinding   = `SELECT entry_id, request_hash FROM idempotency_bindings WHERE idem_key = ?`
	rawLiveTicketed = `SELECT ` + rawV2Columns + ` FROM entries
		WHERE qualified_id = ? AND subject_generation IS NOT NULL ORDER BY subject_generation DESC LIMIT 1`
	rawOldStyleOf = `SELECT ` + rawV2Columns + ` FROM entries
		WHERE (qualified_id = ? OR qualified_id IS NULL) AND state IN ('pending', 'held')
		AND subject_generation IS NULL ORDER BY ordinal`
	rawNextGeneration = `SELECT MAX(
			COALESCE((SELECT last_generation FROM subject_generations WHERE qualified_id = ?1), 0),
			COALESCE((SELECT MAX(subject_generation) FROM entries WHERE qualified_id = ?1), 0)) + 1`
	rawRecordGeneration = `INSERT INTO subject_generations (qualified_id, last_generation) VALUES (?, ?)
		ON CONFLICT (qualified_id) DO UPDATE SET last_generation = excluded.last_generation`
	rawInsert = `INSERT INTO entries (entry_id, ordinal, state, subject_key, task_id,
			workflow_ref, workflow_id, enqueued_at, assigned_at, held_at, run_at, run_at_ns,
			expire_after_secs, expire_at_ns, lease_expires_ns, dispatch, assigned_at_ns,
			qualified_id, subject_generation, workflow_generation, lease_owner, lease_generation,
			lease_expires_at, repo_url, repo_base_ref, repo_head_ref, repo_collision_key)
		VALUES (?, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM entries), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
			?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING ordinal`
	rawRecord = `INSERT INTO audit (entry_id, subject_key, at, at_ns, method,
		from_status, to_status, workflow_id, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	rawBind = `INSERT INTO idempotency_bindings (idem_key, entry_id, request_hash, bound_at)
		VALUES (?, ?, ?, ?)`
	rawV2Candidates = `SELECT ` + rawV2Columns + ` FROM entries
		WHERE state = 'pending' AND (run_at_ns IS NULL OR run_at_ns <= ?) ORDER BY ordinal LIMIT ?`
	rawCollision = `SELECT ` + rawV2Columns + ` FROM entries
		WHERE repo_collision_key = ? AND state = 'assigned' AND subject_generation IS NOT NULL
		ORDER BY assigned_at_ns LIMIT 1`
	rawSave = `UPDATE entries SET state = ?, workflow_id = ?, assigned_at = ?,
		held_at = ?, lease_expires_ns = ?, assigned_at_ns = ?, qualified_id = ?, subject_generation = ?,
		workflow_generation = ?, lease_owner = ?, lease_generation = ?, lease_expires_at = ?
		WHERE entry_id = ?`
	rawGet    = `SELECT ` + rawV2Columns + ` FROM entries WHERE entry_id = ?`
	rawFinish = `INSERT INTO finished_entries (entry_id, subject_key, qualified_id, subject_generation, workflow_id,
		workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url,
		repo_base_ref, repo_head_ref, outcome, finished_at, finished_by)
		SELECT entry_id, subject_key, qualified_id, subject_generation, workflow_id,
		workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url,
		repo_base_ref, repo_head_ref, ?, ?, ? FROM entries WHERE entry_id = ? AND subject_generation IS NOT NULL`
	rawDelete = `DELETE FROM entries WHERE entry_id = ?`
)

// scanAll runs a read and scans every row it returns into throwaway
// values, as the store's collect and scanEntry do; it returns the count.
func scanAll(ctx context.Context, tx *sql.Tx, q string, args ...any) (int, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// runStmts runs writes in order, stopping at the first error.
func runStmts(ctx context.Context, tx *sql.Tx, stmts ...[]any) error {
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s[0].(string), s[1:]...); err != nil {
			return fmt.Errorf("%.40s…: %w", s[0], err)
		}
	}
	return nil
}

func stmt(q string, args ...any) []any { return append([]any{q}, args...) }

// cycle is one v2 cycle of TASK-<n> (the requests enqueueV2Params(n,
// true) and leaseV2Params(1, …) make) and returns each call's wall time.
func (r *rawV2) cycle(b *testing.B, n int) []time.Duration {
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", n) // the shape of the plugin's UUID v4
	task := fmt.Sprintf("TASK-%d", n)
	qid, head, idem := "task:"+task, "refs/heads/animus/"+task, fmt.Sprintf("bench-%d", n)
	url := "https://github.com/acme/app.git"
	wf := fmt.Sprintf("wf-raw-%d", n)
	stamp := func() (string, int64) { now := time.Now(); return now.UTC().Format(time.RFC3339Nano), now.UnixNano() }
	expiry := func(nowNS int64) (string, int64) {
		exp := time.Unix(0, nowNS).Add(30 * time.Minute)
		return exp.UTC().Format(time.RFC3339Nano), exp.UnixNano()
	}
	d := make([]time.Duration, 4)
	d[0] = r.call(b, "queue/v2/enqueue", func(ctx context.Context, tx *sql.Tx) error {
		at, nowNS := stamp()
		if err := runStmts(ctx, tx, stmt(rawSweepAudit, at, nowNS, "queue/v2/enqueue", nowNS)); err != nil {
			return err
		}
		for _, q := range []struct {
			sql string
			arg string
		}{{rawGetBinding, idem}, {rawLiveTicketed, qid}, {rawOldStyleOf, qid}} {
			if found, err := scanAll(ctx, tx, q.sql, q.arg); err != nil || found != 0 {
				return fmt.Errorf("lookup %.40s… found %d: %v", q.sql, found, err)
			}
		}
		var gen, ordinal int64
		if err := tx.QueryRowContext(ctx, rawNextGeneration, qid).Scan(&gen); err != nil {
			return err
		}
		if err := runStmts(ctx, tx, stmt(rawRecordGeneration, qid, gen)); err != nil {
			return err
		}
		dispatch := fmt.Sprintf(`{"requested_at":"2026-06-14T12:00:00Z","subject":{"Task":{"id":"%s"}},"trigger_source":"bench","workflow_ref":"standard"}`, task)
		err := tx.QueryRowContext(ctx, rawInsert, id, "pending", task, task, "standard", nil, at, nil, nil, nil, nil,
			nil, nil, nil, dispatch, nil, qid, gen, nil, nil, 0, nil, url, "refs/heads/main", head, url+"\n"+head,
		).Scan(&ordinal)
		if err != nil {
			return err
		}
		return runStmts(ctx, tx,
			stmt(rawRecord, id, task, at, nowNS, "queue/v2/enqueue", nil, "pending", nil, nil),
			stmt(rawBind, idem, id, "5f2b0c1e9d8a7b6c5f2b0c1e9d8a7b6c5f2b0c1e9d8a7b6c5f2b0c1e9d8a7b6c", at))
	})
	d[1] = r.call(b, "queue/v2/lease", func(ctx context.Context, tx *sql.Tx) error {
		at, nowNS := stamp()
		expAt, expNS := expiry(nowNS)
		if err := runStmts(ctx, tx, stmt(rawSweepAudit, at, nowNS, "queue/v2/lease", nowNS)); err != nil {
			return err
		}
		if found, err := scanAll(ctx, tx, rawV2Candidates, nowNS, 50); err != nil || found != 1 {
			return fmt.Errorf("candidates: %d (%v)", found, err)
		}
		if _, err := scanAll(ctx, tx, rawCollision, url+"\n"+head); err != nil {
			return err
		}
		return runStmts(ctx, tx,
			stmt(rawSave, "assigned", wf, at, nil, expNS, nowNS, qid, 1, 1, benchOwner, 1, expAt, id),
			stmt(rawRecord, id, task, at, nowNS, "queue/v2/lease", "pending", "assigned", wf, nil))
	})
	d[2] = r.call(b, "queue/v2/lease/renew", func(ctx context.Context, tx *sql.Tx) error {
		at, nowNS := stamp()
		expAt, expNS := expiry(nowNS)
		if found, err := scanAll(ctx, tx, rawGet, id); err != nil || found != 1 {
			return fmt.Errorf("get: %d (%v)", found, err)
		}
		return runStmts(ctx, tx, stmt(rawSave, "assigned", wf, at, nil, expNS, nowNS, qid, 1, 1, benchOwner, 1, expAt, id))
	})
	d[3] = r.call(b, "queue/v2/completion", func(ctx context.Context, tx *sql.Tx) error {
		at, nowNS := stamp()
		if found, err := scanAll(ctx, tx, rawGet, id); err != nil || found != 1 {
			return fmt.Errorf("get: %d (%v)", found, err)
		}
		return runStmts(ctx, tx,
			stmt(rawFinish, "completed", at, "queue/v2/completion", id),
			stmt(rawDelete, id),
			stmt(rawRecord, id, task, at, nowNS, "queue/v2/completion", "assigned", "completed", wf, nil))
	})
	return d
}
