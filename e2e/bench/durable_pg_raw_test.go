package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// rawDurablePG runs, through pgx on one kept connection of its own
// (search_path set to the namespace, as pgkit sets it; pgx's default
// statement cache, as pgxpool uses), the statements pkg/durablekit/pgstore
// runs for begin_step (a new reservation) and commit_step, each one
// transaction opened the way pgstore.Update opens it (BEGIN READ
// COMMITTED READ WRITE, then SET LOCAL lock_timeout and the namespace's
// advisory xact lock in one round trip): the floor under the plugin,
// without the process, the protocol, JSON, validation or the step log's
// rules. The sequence was checked against the plugin's with
// log_statement=all.
//
// The statements below are COPIES of pgstore's (store.go, runs.go,
// steps.go; names kept in the comments); re-copy them whenever
// pkg/durablekit/pgstore's SQL changes, or this stops measuring what the
// plugin runs.
type rawDurablePG struct {
	conn *pgx.Conn
}

// rawDurablePGBegin is the first statement of every pgstore.Update, as
// pgstore.newStore builds it with the plugin's default lock timeout
// (config.DefaultLockTimeout, 10 s) and pgstore.lockClass ("DURA").
var rawDurablePGBegin = fmt.Sprintf("SET LOCAL lock_timeout = '%dms'; SELECT pg_advisory_xact_lock(%d, hashtext(current_schema()))",
	10000, 0x44555241)

// Copied from pkg/durablekit/pgstore; see the type's comment.
const (
	// Store.RunExists.
	rawDurablePGRunExists = `SELECT 1 FROM runs WHERE run_id = $1 AND phase_id = $2`
	// sqlActiveStep (Store.ActiveStep).
	rawDurablePGActiveStep = `
	SELECT step_id, run_id, phase_id, step_name, state, reserved_at, expires_at, outcome, output_json, error_json
	FROM steps WHERE idempotency_key = $1 AND state IN ('reserved', 'committed')`
	// Store.InsertReservation.
	rawDurablePGInsertReservation = `
		INSERT INTO steps (step_id, run_id, phase_id, step_name, idempotency_key, state, payload_json, reserved_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, 'reserved', $6, $7, $8)`
	// Store.StepState.
	rawDurablePGStepState = `SELECT state FROM steps WHERE step_id = $1`
	// Store.Commit: the sequence number, then the row.
	rawDurablePGCommitSeq = `UPDATE meta SET last_commit_seq = last_commit_seq + 1 WHERE id = 1 RETURNING last_commit_seq`
	rawDurablePGCommit    = `
		UPDATE steps SET state = 'committed', outcome = $1, output_json = $2, error_json = $3,
			committed_at = $4, commit_seq = $5
		WHERE step_id = $6 AND state = 'reserved'`
	// sqlInFlight (Store.InFlight), run by recover_in_flight in a
	// REPEATABLE READ READ ONLY transaction (Store.View).
	rawDurablePGInFlight = `
	SELECT r.run_id, r.phase_id, r.epoch,
		(SELECT c.step_name FROM steps c
			WHERE c.run_id = r.run_id AND c.phase_id = r.phase_id AND c.state = 'committed'
			ORDER BY c.commit_seq DESC LIMIT 1),
		s.step_id, s.step_name, s.idempotency_key, s.reserved_at, s.expires_at
	FROM steps s
	JOIN runs r ON r.run_id = s.run_id AND r.phase_id = s.phase_id
	WHERE s.state = 'reserved' AND r.epoch > $1
	ORDER BY r.epoch, s.reserved_at, s.step_id COLLATE "C"`
)

// newRawDurablePG connects to the namespace ns, whose schema the plugin
// created, and keeps the connection until cleanup.
func newRawDurablePG(tb testing.TB, ns durablePGNamespace) *rawDurablePG {
	tb.Helper()
	conn, err := ns.connect(context.Background(), "bench-raw")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return &rawDurablePG{conn: conn}
}

// update is one pgstore.Update: pgkit.Tx(ReadWrite) and the lock first.
func (r *rawDurablePG) update(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, r.conn, pgx.TxOptions{IsoLevel: pgx.ReadCommitted, AccessMode: pgx.ReadWrite},
		func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, rawDurablePGBegin); err != nil {
				return err
			}
			return fn(tx)
		})
}

// pair is begin_step of a free key in run bench/p (a new reservation, the
// default TTL of 300 s, no payload) and commit_step of that reservation
// (success, the same output the plugin side commits): two transactions,
// statement for statement what the store runs for them.
func (r *rawDurablePG) pair(tb testing.TB, key string) {
	ctx := context.Background()
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "step_" + hex.EncodeToString(b[:]) // the plugin's step id shape
	err := r.update(ctx, func(tx pgx.Tx) error {
		now := time.Now().UTC()
		var one int
		if err := tx.QueryRow(ctx, rawDurablePGRunExists, "bench", "p").Scan(&one); err != nil {
			return fmt.Errorf("run exists: %w", err)
		}
		var (
			sid, run, phase, name, state string
			reserved, expires            int64
			outcome, output, errJSON     *string
		)
		err := tx.QueryRow(ctx, rawDurablePGActiveStep, key).Scan(&sid, &run, &phase, &name, &state, &reserved, &expires, &outcome, &output, &errJSON)
		if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("key %s not free: %v", key, err)
		}
		_, err = tx.Exec(ctx, rawDurablePGInsertReservation, id, "bench", "p", key, key, (*string)(nil),
			now.UnixNano(), now.Add(300*time.Second).UnixNano())
		return err
	})
	if err == nil {
		err = r.update(ctx, func(tx pgx.Tx) error {
			now := time.Now().UTC()
			var state string
			if err := tx.QueryRow(ctx, rawDurablePGStepState, id).Scan(&state); err != nil {
				return fmt.Errorf("step state: %w", err)
			}
			if state != "reserved" {
				return fmt.Errorf("step %s is %s", id, state)
			}
			var seq int64
			if err := tx.QueryRow(ctx, rawDurablePGCommitSeq).Scan(&seq); err != nil {
				return err
			}
			output := `{"text":"ok","tokens":12}`
			_, err := tx.Exec(ctx, rawDurablePGCommit, "success", &output, (*string)(nil), now.UnixNano(), seq, id)
			return err
		})
	}
	if err != nil {
		tb.Fatalf("raw pair %s: %v", key, err)
	}
}

// recover is one recover_in_flight {"since_epoch":0} as Store.View and
// Store.InFlight run it; it returns the number of rows.
func (r *rawDurablePG) recover(tb testing.TB) int {
	ctx := context.Background()
	n := 0
	err := pgx.BeginTxFunc(ctx, r.conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, rawDurablePGInFlight, int64(0))
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var run, phase, sid, name, key string
				var epoch, reserved, expires int64
				var last *string
				if err := rows.Scan(&run, &phase, &epoch, &last, &sid, &name, &key, &reserved, &expires); err != nil {
					return err
				}
				n++
			}
			return rows.Err()
		})
	if err != nil {
		tb.Fatalf("raw recover_in_flight: %v", err)
	}
	return n
}
