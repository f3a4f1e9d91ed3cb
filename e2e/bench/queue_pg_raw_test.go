package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// rawPG runs, through pgx on one connection of its own (search_path set
// to the namespace, as pgkit sets it; pgx's default statement cache, as
// pgxpool uses), the statements pkg/queuekit/pgstore runs for each
// queue/v2 call of the cycle, each call one transaction opened the way
// pgstore.Update opens it (BEGIN READ COMMITTED, SET LOCAL lock_timeout,
// the namespace's advisory xact lock): the floor under the plugin, without
// the process, the protocol, JSON, validation, the dispatch codec or the
// request hash.
//
// perCall mirrors the process model: each call dials, pings and reads the
// schema version (pgkit.Migrate's check on a current schema), runs its
// transaction and closes, as one plugin process per call does.
//
// The statements below are COPIES of pgstore's (names kept); re-copy them
// whenever pkg/queuekit/pgstore's SQL changes, or this stops measuring
// what the plugin runs.
type rawPG struct {
	q    pgns.NS
	cfg  *pgx.ConnConfig
	conn *pgx.Conn // nil: connect per call
}

// newRawPG mirrors on the namespace q, whose schema the plugin created
// (the caller ran it once), with a kept connection unless perCall.
func newRawPG(b *testing.B, q pgns.NS, perCall bool) *rawPG {
	b.Helper()
	cfg, err := pgx.ParseConfig(q.DSN)
	if err != nil {
		b.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = q.Schema
	cfg.RuntimeParams["application_name"] = "bench-raw"
	r := &rawPG{q: q, cfg: cfg}
	if !perCall {
		if r.conn, err = pgx.ConnectConfig(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.conn.Close(context.Background()) })
	}
	return r
}

// The first statements of every pgstore.Update, as pgstore.Open builds
// them with the default lock timeout (5 s) and pgstore.lockClass.
var rawPGBegin = fmt.Sprintf("SET LOCAL lock_timeout = '%dms'; SELECT pg_advisory_xact_lock(%d, hashtext(current_schema()))",
	5000, 0x51554555)

// Copied from pkg/queuekit/pgstore (entries.go, tickets.go, writes.go,
// audit.go); see the type's comment.
const (
	rawPGEntryColumns = `entry_id, ordinal, state, subject_key, task_id, workflow_ref, workflow_id,
	enqueued_at, assigned_at, held_at, run_at, run_at_ns, expire_after_secs, expire_at_ns,
	lease_expires_ns, dispatch, assigned_at_ns, qualified_id, subject_generation,
	workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url,
	repo_base_ref, repo_head_ref, repo_collision_key`
	rawPGFinishColumns = `(entry_id, subject_key, qualified_id, subject_generation, workflow_id,
		workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url,
		repo_base_ref, repo_head_ref, outcome, finished_at, finished_by)`
	rawPGFinishSelect = `entry_id, subject_key, qualified_id, subject_generation, workflow_id,
		workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url,
		repo_base_ref, repo_head_ref`

	rawPGSweep = `WITH gone AS (
			DELETE FROM entries WHERE state = 'pending' AND expire_at_ns < $1 RETURNING *
		), audited AS (
			INSERT INTO audit (entry_id, subject_key, at, at_ns, method, from_status, to_status, workflow_id, reason)
			SELECT entry_id, subject_key, $2, $1, $3, 'pending', 'expired', NULL, 'expire_after_secs elapsed after run_at'
			FROM gone ORDER BY expire_at_ns, ordinal
			RETURNING 1
		), kept AS (
			INSERT INTO finished_entries ` + rawPGFinishColumns + `
			SELECT ` + rawPGFinishSelect + `, 'dropped', $2, 'expiry-sweep'
			FROM gone WHERE subject_generation IS NOT NULL
		)
		SELECT COUNT(*) FROM audited`
	rawPGGetBinding   = `SELECT entry_id, request_hash FROM idempotency_bindings WHERE idem_key = $1`
	rawPGLiveTicketed = `SELECT ` + rawPGEntryColumns + ` FROM entries
		WHERE qualified_id = $1 AND subject_generation IS NOT NULL ORDER BY subject_generation DESC LIMIT 1`
	rawPGOldStyleOf = `SELECT ` + rawPGEntryColumns + ` FROM entries
		WHERE (qualified_id = $1 OR qualified_id IS NULL) AND state IN ('pending', 'held')
		AND subject_generation IS NULL ORDER BY ordinal`
	rawPGNextGeneration = `INSERT INTO subject_generations AS g (qualified_id, last_generation)
	VALUES ($1, GREATEST(
		COALESCE((SELECT last_generation FROM subject_generations WHERE qualified_id = $1), 0),
		COALESCE((SELECT MAX(subject_generation) FROM entries WHERE qualified_id = $1), 0)) + 1)
	ON CONFLICT (qualified_id) DO UPDATE SET last_generation = EXCLUDED.last_generation
	RETURNING g.last_generation`
	rawPGInsert = `INSERT INTO entries (entry_id, ordinal, state, subject_key, task_id,
			workflow_ref, workflow_id, enqueued_at, assigned_at, held_at, run_at, run_at_ns,
			expire_after_secs, expire_at_ns, lease_expires_ns, dispatch, assigned_at_ns,
			qualified_id, subject_generation, workflow_generation, lease_owner, lease_generation,
			lease_expires_at, repo_url, repo_base_ref, repo_head_ref, repo_collision_key, project_root)
		VALUES ($1, (SELECT COALESCE(MAX(ordinal), 0) + 1 FROM entries), $2, $3, $4, $5, $6, $7, $8, $9,
			$10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27)
		RETURNING ordinal`
	rawPGRecord = `INSERT INTO audit (entry_id, subject_key, at, at_ns, method,
		from_status, to_status, workflow_id, reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`
	rawPGBind = `INSERT INTO idempotency_bindings (idem_key, entry_id, request_hash, bound_at)
		VALUES ($1, $2, $3, $4)`
	// V2Candidates in a write transaction: forUpdate() appended.
	rawPGV2Candidates = `SELECT ` + rawPGEntryColumns + ` FROM entries
		WHERE state = 'pending' AND (run_at_ns IS NULL OR run_at_ns <= $1) ORDER BY ordinal LIMIT $2` +
		` FOR UPDATE SKIP LOCKED`
	rawPGCollision = `SELECT ` + rawPGEntryColumns + ` FROM entries
		WHERE repo_collision_key = $1 AND state = 'assigned' AND subject_generation IS NOT NULL
		ORDER BY assigned_at_ns NULLS FIRST LIMIT 1`
	rawPGSave = `UPDATE entries SET state = $1, workflow_id = $2, assigned_at = $3,
		held_at = $4, lease_expires_ns = $5, assigned_at_ns = $6, qualified_id = $7, subject_generation = $8,
		workflow_generation = $9, lease_owner = $10, lease_generation = $11, lease_expires_at = $12
		WHERE entry_id = $13`
	rawPGGet    = `SELECT ` + rawPGEntryColumns + ` FROM entries WHERE entry_id = $1`
	rawPGFinish = `WITH gone AS (DELETE FROM entries WHERE entry_id = $1 RETURNING *)
	INSERT INTO finished_entries ` + rawPGFinishColumns + `
	SELECT ` + rawPGFinishSelect + `, $2, $3, $4 FROM gone WHERE subject_generation IS NOT NULL`
)

// Column positions in rawPGEntryColumns the lease reads back.
const (
	colEntryID      = 0
	colSubjectKey   = 3
	colQualifiedID  = 17
	colSubjectGen   = 18
	colLeaseGen     = 21
	colCollisionKey = 26
)

// call runs fn as one plugin call's pgstore.Update does.
func (r *rawPG) call(tb testing.TB, what string, fn func(ctx context.Context, tx pgx.Tx) error) time.Duration {
	ctx := context.Background()
	t0 := time.Now()
	conn := r.conn
	if conn == nil {
		var err error
		if conn, err = pgx.ConnectConfig(ctx, r.cfg); err != nil {
			tb.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.Ping(ctx); err != nil {
			tb.Fatal(err)
		}
		var v int
		if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+
			pgx.Identifier{r.q.Schema}.Sanitize()+".schema_migrations").Scan(&v); err != nil || v < 1 {
			tb.Fatalf("schema version %d: %v", v, err)
		}
	}
	err := pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite},
		func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, rawPGBegin); err != nil {
				return err
			}
			return fn(ctx, tx)
		})
	if err != nil {
		tb.Fatalf("raw %s: %v", what, err)
	}
	if r.conn == nil {
		conn.Close(ctx) // part of the call: a process closes its pool on exit
	}
	return time.Since(t0)
}

// pgRows scans every row of a read into generic values, as collect and
// scanEntry decode every column; it returns the rows.
func pgRows(ctx context.Context, tx pgx.Tx, q string, args ...any) ([][]any, error) {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func pgExec(ctx context.Context, tx pgx.Tx, stmts ...[]any) error {
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s[0].(string), s[1:]...); err != nil {
			return fmt.Errorf("%.40s…: %w", s[0], err)
		}
	}
	return nil
}

// rawPGEnqueue is queue/v2/enqueue of TASK-<n> with idempotency key
// bench-<n> (enqueueV2Params(n, true)) on a subject with no live entry.
func (r *rawPG) enqueue(tb testing.TB, n int) time.Duration {
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", n) // the shape of the plugin's UUID v4
	task := fmt.Sprintf("TASK-%d", n)
	qid, head, idem := "task:"+task, "refs/heads/animus/"+task, fmt.Sprintf("bench-%d", n)
	url := "https://github.com/acme/app.git"
	return r.call(tb, "queue/v2/enqueue", func(ctx context.Context, tx pgx.Tx) error {
		at, nowNS := pgStamp()
		var swept int64
		if err := tx.QueryRow(ctx, rawPGSweep, nowNS, at, "queue/v2/enqueue").Scan(&swept); err != nil {
			return err
		}
		for _, l := range []struct{ sql, arg string }{{rawPGGetBinding, idem}, {rawPGLiveTicketed, qid}, {rawPGOldStyleOf, qid}} {
			if found, err := pgRows(ctx, tx, l.sql, l.arg); err != nil || len(found) != 0 {
				return fmt.Errorf("lookup %.40s… found %d: %v", l.sql, len(found), err)
			}
		}
		var gen, ordinal int64
		if err := tx.QueryRow(ctx, rawPGNextGeneration, qid).Scan(&gen); err != nil {
			return err
		}
		dispatch := fmt.Sprintf(`{"requested_at":"2026-06-14T12:00:00Z","subject":{"Task":{"id":"%s"}},"trigger_source":"bench","workflow_ref":"standard"}`, task)
		err := tx.QueryRow(ctx, rawPGInsert, id, "pending", task, task, "standard", nil, at, nil, nil, nil, nil,
			nil, nil, nil, dispatch, nil, qid, gen, nil, nil, 0, nil, url, "refs/heads/main", head, url+"\n"+head, "/bench",
		).Scan(&ordinal)
		if err != nil {
			return err
		}
		return pgExec(ctx, tx,
			stmt(rawPGRecord, id, task, at, nowNS, "queue/v2/enqueue", nil, "pending", nil, nil),
			stmt(rawPGBind, idem, id, "5f2b0c1e9d8a7b6c5f2b0c1e9d8a7b6c5f2b0c1e9d8a7b6c5f2b0c1e9d8a7b6c", at))
	})
}

// lease is queue/v2/lease with max 1 (window 50): the head of the queue,
// whichever entry that is, goes to wf. It returns the leased entry's id.
func (r *rawPG) lease(tb testing.TB, wf string) (string, time.Duration) {
	var id string
	d := r.call(tb, "queue/v2/lease", func(ctx context.Context, tx pgx.Tx) error {
		at, nowNS := pgStamp()
		exp := time.Unix(0, nowNS).Add(30 * time.Minute)
		expAt, expNS := exp.UTC().Format(time.RFC3339Nano), exp.UnixNano()
		var swept int64
		if err := tx.QueryRow(ctx, rawPGSweep, nowNS, at, "queue/v2/lease").Scan(&swept); err != nil {
			return err
		}
		cands, err := pgRows(ctx, tx, rawPGV2Candidates, nowNS, int64(50))
		if err != nil || len(cands) == 0 {
			return fmt.Errorf("candidates: %d (%v)", len(cands), err)
		}
		e := cands[0]
		id = e[colEntryID].(string)
		if _, err := pgRows(ctx, tx, rawPGCollision, e[colCollisionKey]); err != nil {
			return err
		}
		return pgExec(ctx, tx,
			stmt(rawPGSave, "assigned", wf, at, nil, expNS, nowNS, e[colQualifiedID], e[colSubjectGen], int64(1),
				benchOwner, e[colLeaseGen].(int64)+1, expAt, id),
			stmt(rawPGRecord, id, e[colSubjectKey], at, nowNS, "queue/v2/lease", "pending", "assigned", wf, nil))
	})
	return id, d
}

// completion is queue/v2/completion (status completed) of a leased entry.
func (r *rawPG) completion(tb testing.TB, id, wf string) time.Duration {
	return r.call(tb, "queue/v2/completion", func(ctx context.Context, tx pgx.Tx) error {
		at, nowNS := pgStamp()
		got, err := pgRows(ctx, tx, rawPGGet, id)
		if err != nil || len(got) != 1 || got[0][2] != "assigned" {
			return fmt.Errorf("get %s: %d rows (%v)", id, len(got), err)
		}
		return pgExec(ctx, tx,
			stmt(rawPGFinish, id, "completed", at, "queue/v2/completion"),
			stmt(rawPGRecord, id, got[0][colSubjectKey], at, nowNS, "queue/v2/completion", "assigned", "completed", wf, nil))
	})
}

// cycle is one enqueue → lease → completion of TASK-<n>; with concurrent
// workers the lease hands out the head of the queue, which the worker
// then completes, as a daemon does.
func (r *rawPG) cycle(tb testing.TB, n int) {
	r.enqueue(tb, n)
	wf := fmt.Sprintf("wf-raw-%d", n)
	id, _ := r.lease(tb, wf)
	r.completion(tb, id, wf)
}

func pgStamp() (string, int64) {
	now := time.Now()
	return now.UTC().Format(time.RFC3339Nano), now.UnixNano()
}
