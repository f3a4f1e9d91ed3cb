package pgstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/steplog"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// A step log moves from SQLite to PostgreSQL row for row: build one
// through steplog, export, import into a fresh namespace, read every row
// back, compare; the counters go on above the imported ones.
func TestImportFromSQLite(t *testing.T) {
	pgtest.DSN(t) // skip before building the SQLite log
	ctx := context.Background()
	src, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "durable.sqlite"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	now := t0
	clock := func() time.Time { now = now.Add(time.Millisecond + 7); return now }
	lg := steplog.New(src, clock)
	begin := func(run, name, key string, ttl time.Duration, payload string) steplog.BeginResult {
		t.Helper()
		r := steplog.StepRequest{Identity: storage.Identity{RunID: run, PhaseID: "p", StepName: name}, IdempotencyKey: key, TTL: ttl}
		if payload != "" {
			r.Payload = []byte(payload)
		}
		res, err := lg.BeginStep(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = lg.BeginWorkflowRun(ctx, "a", "p", []byte(`{"in":"é","n":1.50}`))
	must(err)
	_, err = lg.BeginWorkflowRun(ctx, "b", "p", nil)
	must(err)
	_, err = lg.BeginWorkflowRun(ctx, "a", "p", []byte(`{"ignored":true}`)) // a second epoch for a
	must(err)
	ok := begin("a", "0", "k0", time.Hour, `{"z":1,"a":2}`)
	must(lg.CommitStep(ctx, steplog.Commit{StepID: ok.StepID, Outcome: steplog.OutcomeSuccess, Output: []byte(`{"z":1,"a":[1.50]}`)}))
	bad := begin("a", "1", "k1", time.Hour, "")
	must(lg.CommitStep(ctx, steplog.Commit{StepID: bad.StepID, Outcome: steplog.OutcomeError, Error: []byte(`{"code":"X","message":"boom"}`)}))
	begin("a", "2", "k2", time.Hour, "") // stays reserved
	gone := begin("b", "0", "kb0", time.Hour, "")
	if _, err := lg.AbandonStep(ctx, gone.StepID, "changed my mind"); err != nil {
		t.Fatal(err)
	}
	lapsed := begin("b", "1", "kb1", time.Nanosecond, "")
	again := begin("b", "1", "kb1", time.Hour, "") // supersedes the lapsed one
	if again.Status != steplog.StatusNew || again.StepID == lapsed.StepID {
		t.Fatalf("supersede: %+v", again)
	}
	noOutput := begin("b", "2", "kb2", time.Hour, "")
	must(lg.CommitStep(ctx, steplog.Commit{StepID: noOutput.StepID, Outcome: steplog.OutcomeSuccess}))

	dump, err := sqlitestore.Export(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	states := map[storage.State]int{}
	for _, s := range dump.Steps {
		states[s.State]++
	}
	if len(dump.Runs) != 2 || len(dump.Steps) != 7 || dump.LastEpoch != 3 || dump.LastCommitSeq != 3 ||
		states[storage.Committed] != 3 || states[storage.Reserved] != 2 || states[storage.Abandoned] != 1 || states[storage.Superseded] != 1 {
		t.Fatalf("export: %d runs, %d steps %v, counters %d %d", len(dump.Runs), len(dump.Steps), states, dump.LastEpoch, dump.LastCommitSeq)
	}
	dst := openT(t)
	if err := dst.Import(ctx, dump); err != nil {
		t.Fatal(err)
	}
	got := pgDump(t, dst)
	if !reflect.DeepEqual(got, dump) {
		t.Errorf("imported rows differ\n got %s\nwant %s", show(got), show(dump))
	}
	// The reads answer as SQLite's did.
	pgLog := steplog.New(dst, clock)
	for _, run := range []string{"a", "b"} {
		want, err1 := lg.QueryRun(ctx, run, "p")
		have, err2 := pgLog.QueryRun(ctx, run, "p")
		if err1 != nil || err2 != nil || !reflect.DeepEqual(want, have) {
			t.Errorf("query_run %s: %+v %v, SQLite %+v %v", run, have, err2, want, err1)
		}
	}
	wantIF, err1 := lg.RecoverInFlight(ctx, 0)
	haveIF, err2 := pgLog.RecoverInFlight(ctx, 0)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(wantIF, haveIF) {
		t.Errorf("recover_in_flight: %+v %v, SQLite %+v %v", haveIF, err2, wantIF, err1)
	}
	// The namespace goes on where SQLite stopped.
	if e, err := pgLog.BeginWorkflowRun(ctx, "c", "p", nil); err != nil || e != uint64(dump.LastEpoch)+1 {
		t.Errorf("epoch after import %d, %v; want %d", e, err, dump.LastEpoch+1)
	}
	next := begin2(t, pgLog, "c", "k-c")
	if err := pgLog.CommitStep(ctx, steplog.Commit{StepID: next, Outcome: steplog.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	for _, s := range pgDump(t, dst).Steps {
		if s.ID == next && (s.CommitSeq == nil || *s.CommitSeq != dump.LastCommitSeq+1) {
			t.Errorf("commit seq after import %v, want %d", s.CommitSeq, dump.LastCommitSeq+1)
		}
	}
	// A committed key is still exactly-once after the move.
	if r := begin2Status(t, pgLog, "a", "0", "k0"); r != steplog.StatusAlreadyCommitted {
		t.Errorf("begin_step of an imported commit: %s", r)
	}
	// A second import is refused and changes nothing.
	before := pgDump(t, dst)
	if err := dst.Import(ctx, dump); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("second import: %v, want ErrNotEmpty", err)
	}
	if after := pgDump(t, dst); !reflect.DeepEqual(before, after) {
		t.Errorf("a refused import changed the namespace")
	}
	// A run alone makes a namespace non-empty.
	only := openT(t)
	update(t, only, func(tx storage.Store) error { return tx.UpsertRun(ctx, "r", "p", 1, nil, t0) })
	if err := only.Import(ctx, &storage.Dump{}); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("import over a run: %v", err)
	}
}

func begin2(t *testing.T, l *steplog.Log, run, key string) string {
	t.Helper()
	r, err := l.BeginStep(context.Background(), steplog.StepRequest{Identity: storage.Identity{RunID: run, PhaseID: "p", StepName: "x"}, IdempotencyKey: key, TTL: time.Hour})
	if err != nil || r.Status != steplog.StatusNew {
		t.Fatalf("begin_step %s: %+v, %v", key, r, err)
	}
	return r.StepID
}

func begin2Status(t *testing.T, l *steplog.Log, run, name, key string) steplog.Status {
	t.Helper()
	r, err := l.BeginStep(context.Background(), steplog.StepRequest{Identity: storage.Identity{RunID: run, PhaseID: "p", StepName: name}, IdempotencyKey: key, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status
}

// pgDump reads a namespace back into a Dump, ordered as Export orders
// (byte order: COLLATE "C").
func pgDump(t *testing.T, st *Store) *storage.Dump {
	t.Helper()
	ctx := context.Background()
	d := &storage.Dump{}
	err := st.View(ctx, func(r storage.Store) error {
		s := r.(*Store)
		if err := s.runner().QueryRow(ctx, `SELECT last_epoch, last_commit_seq FROM meta`).Scan(&d.LastEpoch, &d.LastCommitSeq); err != nil {
			return err
		}
		rows, err := s.runner().Query(ctx, `SELECT run_id, phase_id, epoch, inputs_json, created_at, updated_at
			FROM runs ORDER BY run_id COLLATE "C", phase_id COLLATE "C"`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r storage.RunRow
			var inputs *string
			var created, updated int64
			if err := rows.Scan(&r.RunID, &r.PhaseID, &r.Epoch, &inputs, &created, &updated); err != nil {
				return err
			}
			r.Inputs, r.CreatedAt, r.UpdatedAt = bytesOf(inputs), fromNanos(created), fromNanos(updated)
			d.Runs = append(d.Runs, r)
		}
		rows.Close()
		rows, err = s.runner().Query(ctx, `SELECT step_id, run_id, phase_id, step_name, idempotency_key, state,
			payload_json, reserved_at, expires_at, outcome, output_json, error_json, committed_at, commit_seq,
			released_at, release_reason, superseded_by
			FROM steps ORDER BY step_id COLLATE "C"`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				r                                 storage.StepRow
				state                             string
				reserved, expires                 int64
				payload, outcome, output, errJSON *string
				committed, released               *int64
			)
			if err := rows.Scan(&r.ID, &r.RunID, &r.PhaseID, &r.StepName, &r.IdempotencyKey, &state,
				&payload, &reserved, &expires, &outcome, &output, &errJSON, &committed, &r.CommitSeq,
				&released, &r.ReleaseReason, &r.SupersededBy); err != nil {
				return err
			}
			r.State, r.Payload = storage.State(state), bytesOf(payload)
			r.ReservedAt, r.ExpiresAt = fromNanos(reserved), fromNanos(expires)
			r.Outcome, r.Output, r.Error = str(outcome), bytesOf(output), bytesOf(errJSON)
			if committed != nil {
				c := fromNanos(*committed)
				r.CommittedAt = &c
			}
			if released != nil {
				c := fromNanos(*released)
				r.ReleasedAt = &c
			}
			d.Steps = append(d.Steps, r)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func show(d *storage.Dump) string {
	s := fmt.Sprintf("counters %d %d\n", d.LastEpoch, d.LastCommitSeq)
	for _, r := range d.Runs {
		s += fmt.Sprintf("run %+v inputs=%s\n", r, r.Inputs)
	}
	for _, r := range d.Steps {
		s += fmt.Sprintf("step %+v payload=%s output=%s error=%s committed=%v seq=%v released=%v reason=%v by=%v\n",
			r.Step, r.Payload, r.Output, r.Error, r.CommittedAt, deref(r.CommitSeq), r.ReleasedAt, deref(r.ReleaseReason), deref(r.SupersededBy))
	}
	return s
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
