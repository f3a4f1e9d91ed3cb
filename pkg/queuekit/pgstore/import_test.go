package pgstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
)

// A queue moves from SQLite to PostgreSQL row for row: export, import into
// a fresh namespace, export the same way from PostgreSQL, compare.
func TestImportFromSQLite(t *testing.T) {
	pgtest.DSN(t) // skip before building the SQLite queue
	ctx := context.Background()
	src, err := sqlitestore.Open(ctx, sqlitestore.Options{Path: filepath.Join(t.TempDir(), "q.sqlite")})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	err = src.Update(ctx, func(tx storage.Store) error {
		old := entry("old", "A", "pending")
		old.RunAt, old.RunAtNS, old.ExpireAfterSecs, old.ExpireAtNS = ptr("r"), ptr(int64(5)), ptr("18446744073709551615"), ptr(int64(9))
		tick := entry("tick", "B", "assigned")
		tick.QualifiedID, tick.SubjectGeneration, tick.LeaseOwner, tick.LeaseGeneration = ptr("task:B"), ptr(int64(2)), ptr("d"), 3
		tick.RepoCollisionKey, tick.Dispatch = ptr("k"), []byte(`{"z":1,"a":[1.50,"é"]}`)
		done := entry("done", "C", "assigned")
		done.QualifiedID, done.SubjectGeneration, done.LeaseGeneration = ptr("task:C"), ptr(int64(1)), 1
		for _, e := range []*storage.Entry{old, tick, done, entry("held", "D", "held")} {
			if err := tx.Insert(ctx, e); err != nil {
				return err
			}
			if err := tx.Record(ctx, storage.Audit{EntryID: e.ID, SubjectKey: e.SubjectKey, At: "t", AtNS: 1, Method: "queue/enqueue", To: "pending"}); err != nil {
				return err
			}
		}
		if err := tx.SetOrdinal(ctx, "held", -7); err != nil {
			return err
		}
		for _, q := range []string{"task:B", "task:B", "task:C", "task:Z"} {
			if _, err := tx.NextGeneration(ctx, q); err != nil {
				return err
			}
		}
		if err := tx.Bind(ctx, "key-1", "tick", "h1", "t1"); err != nil {
			return err
		}
		if err := tx.Finish(ctx, "done", "completed", "t2", "queue/v2/completion"); err != nil {
			return err
		}
		return tx.Record(ctx, storage.Audit{EntryID: "done", SubjectKey: "C", At: "t2", AtNS: 2, Method: "queue/v2/completion",
			From: ptr("assigned"), To: "completed", WorkflowID: ptr("wf"), Reason: ptr("r")})
	})
	if err != nil {
		t.Fatal(err)
	}
	dump, err := sqlitestore.Export(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(dump.Entries) != 3 || len(dump.Audit) != 5 || len(dump.Finished) != 1 || len(dump.Generations) != 3 || len(dump.Bindings) != 1 {
		t.Fatalf("export %+v", dump)
	}
	dst := openT(t)
	if err := dst.Import(ctx, dump); err != nil {
		t.Fatal(err)
	}
	got := pgDump(t, dst)
	if !reflect.DeepEqual(got, dump) {
		t.Errorf("imported rows differ\n got %s\nwant %s", show(got), show(dump))
	}
	// The namespace goes on where SQLite stopped.
	update(t, dst, func(tx storage.Store) error {
		e := entry("new", "N", "pending")
		if err := tx.Insert(ctx, e); err != nil || e.Ordinal != 3 {
			return fmt.Errorf("insert after import: ordinal %d, %v", e.Ordinal, err)
		}
		if g, err := tx.NextGeneration(ctx, "task:B"); err != nil || g != 5 { // 3 and 4 were allocated in SQLite above the live 2
			return fmt.Errorf("next generation after import %d, %v", g, err)
		}
		if err := tx.Record(ctx, storage.Audit{EntryID: "new", SubjectKey: "N", At: "t", AtNS: 3, Method: "m", To: "pending"}); err != nil {
			return err
		}
		c, err := tx.Counts(ctx, 0)
		if err != nil || c != (storage.Counts{Pending: 2, Assigned: 1, Held: 1, Deferred: 1}) {
			return fmt.Errorf("counts after import %+v, %v", c, err)
		}
		return tx.Delete(ctx, "new")
	})
	view(t, dst, func(r storage.Store) {
		trail, _ := r.AuditTrail(ctx, "", 1)
		if len(trail) != 1 || trail[0].Seq != dump.Audit[len(dump.Audit)-1].Seq+1 {
			t.Errorf("audit seq after import: %+v", trail)
		}
	})
	// A second import is refused and changes nothing.
	before := pgDump(t, dst)
	if err := dst.Import(ctx, dump); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("second import: %v, want ErrNotEmpty", err)
	}
	if after := pgDump(t, dst); !reflect.DeepEqual(before, after) {
		t.Errorf("a refused import changed the namespace")
	}
	// Any kind of row makes a namespace non-empty.
	only := openT(t)
	update(t, only, func(tx storage.Store) error { return tx.Bind(ctx, "k", "e", "h", "t") })
	if err := only.Import(ctx, &storage.Dump{}); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("import over a binding: %v", err)
	}
}

// pgDump reads a namespace back into a Dump, ordered as Export orders.
func pgDump(t *testing.T, st *Store) *storage.Dump {
	t.Helper()
	ctx := context.Background()
	d := &storage.Dump{}
	view(t, st, func(r storage.Store) {
		s := r.(*Store)
		var err error
		if d.Entries, err = collect(s.runner().Query(ctx, `SELECT `+entryColumns+` FROM entries ORDER BY ordinal`)); err != nil {
			t.Fatal(err)
		}
		if d.Audit, err = collectAudit(s.runner().Query(ctx, `SELECT `+auditColumns+` FROM audit ORDER BY seq`)); err != nil {
			t.Fatal(err)
		}
		rows, err := s.runner().Query(ctx, `SELECT entry_id, subject_key, qualified_id, subject_generation, workflow_id,
			workflow_generation, lease_owner, lease_generation, lease_expires_at, repo_url, repo_base_ref,
			repo_head_ref, outcome, finished_at, finished_by FROM finished_entries ORDER BY entry_id COLLATE "C"`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var f storage.FinishedRow
			if err := rows.Scan(&f.ID, &f.SubjectKey, &f.QualifiedID, &f.SubjectGeneration, &f.WorkflowID, &f.WorkflowGeneration,
				&f.LeaseOwner, &f.LeaseGeneration, &f.LeaseExpiresAt, &f.RepoURL, &f.RepoBaseRef, &f.RepoHeadRef,
				&f.Outcome, &f.FinishedAt, &f.FinishedBy); err != nil {
				t.Fatal(err)
			}
			d.Finished = append(d.Finished, f)
		}
		rows.Close()
		rows, err = s.runner().Query(ctx, `SELECT qualified_id, last_generation FROM subject_generations ORDER BY qualified_id COLLATE "C"`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var g storage.Generation
			if err := rows.Scan(&g.QualifiedID, &g.LastGeneration); err != nil {
				t.Fatal(err)
			}
			d.Generations = append(d.Generations, g)
		}
		rows.Close()
		rows, err = s.runner().Query(ctx, `SELECT idem_key, entry_id, request_hash, bound_at FROM idempotency_bindings ORDER BY idem_key COLLATE "C"`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var b storage.BindingRow
			if err := rows.Scan(&b.Key, &b.EntryID, &b.RequestHash, &b.BoundAt); err != nil {
				t.Fatal(err)
			}
			d.Bindings = append(d.Bindings, b)
		}
		rows.Close()
	})
	return d
}

func show(d *storage.Dump) string {
	s := ""
	for _, e := range d.Entries {
		s += deref(e) + "\n"
	}
	return s + fmt.Sprintf("%+v %+v %+v %+v", d.Audit, d.Finished, d.Generations, d.Bindings)
}
