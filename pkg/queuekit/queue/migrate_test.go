package queue

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/queuekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// schema032 is the file the 0.3.2 plugin wrote (user_version 1), frozen
// here so the upgrade is tested against what is on operators' disks, not
// against whatever migration 1 says today.
var schema032 = []string{
	`CREATE TABLE entries (entry_id TEXT PRIMARY KEY, ordinal INTEGER NOT NULL,
		state TEXT NOT NULL CHECK (state IN ('pending', 'assigned', 'held')), subject_key TEXT NOT NULL,
		task_id TEXT, workflow_ref TEXT NOT NULL, workflow_id TEXT, enqueued_at TEXT NOT NULL,
		assigned_at TEXT, held_at TEXT, run_at TEXT, run_at_ns INTEGER, expire_after_secs TEXT,
		expire_at_ns INTEGER, lease_expires_ns INTEGER, dispatch TEXT NOT NULL)`,
	`CREATE UNIQUE INDEX entries_ordinal ON entries (ordinal)`,
	`CREATE INDEX entries_state_ordinal ON entries (state, ordinal)`,
	`CREATE INDEX entries_state_run_at ON entries (state, run_at_ns)`,
	`CREATE INDEX entries_subject ON entries (subject_key)`,
	`CREATE INDEX entries_state_expiry ON entries (state, expire_at_ns)`,
	`CREATE TABLE state_counts (state TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID`,
	`INSERT INTO state_counts (state, n) VALUES ('pending', 0), ('assigned', 0), ('held', 0)`,
	`CREATE TRIGGER entries_count_insert AFTER INSERT ON entries BEGIN
		UPDATE state_counts SET n = n + 1 WHERE state = NEW.state; END`,
	`CREATE TRIGGER entries_count_delete AFTER DELETE ON entries BEGIN
		UPDATE state_counts SET n = n - 1 WHERE state = OLD.state; END`,
	`CREATE TRIGGER entries_count_update AFTER UPDATE OF state ON entries WHEN OLD.state <> NEW.state BEGIN
		UPDATE state_counts SET n = n - 1 WHERE state = OLD.state;
		UPDATE state_counts SET n = n + 1 WHERE state = NEW.state; END`,
	`CREATE TABLE audit (seq INTEGER PRIMARY KEY, entry_id TEXT NOT NULL, subject_key TEXT NOT NULL,
		at TEXT NOT NULL, at_ns INTEGER NOT NULL, method TEXT NOT NULL, from_status TEXT,
		to_status TEXT NOT NULL, workflow_id TEXT, reason TEXT)`,
	`CREATE INDEX audit_entry ON audit (entry_id, seq)`,
	`CREATE INDEX audit_at ON audit (at_ns)`,
	// A pending and an assigned TASK-1 (an old-style duplicate, the
	// assigned one leased without a TTL at 11:00), a pending TASK-2.
	`INSERT INTO entries (entry_id, ordinal, state, subject_key, task_id, workflow_ref, workflow_id, enqueued_at, assigned_at, dispatch) VALUES
		('old-a', 1, 'assigned', 'TASK-1', 'TASK-1', 'standard', 'wf-old', '2026-06-14T10:00:00+00:00', '2026-06-14T11:00:00.5+00:00',
		 '{"requested_at":"2026-06-14T10:00:00Z","subject":{"Task":{"id":"TASK-1"}},"trigger_source":"t","workflow_ref":"standard"}'),
		('old-b', 2, 'pending', 'TASK-1', 'TASK-1', 'standard', NULL, '2026-06-14T10:00:01+00:00', NULL,
		 '{"requested_at":"2026-06-14T10:00:00Z","subject":{"Task":{"id":"TASK-1"}},"trigger_source":"t","workflow_ref":"standard"}'),
		('old-c', 3, 'pending', 'TASK-2', 'TASK-2', 'standard', NULL, '2026-06-14T10:00:02+00:00', NULL,
		 '{"requested_at":"2026-06-14T10:00:00Z","subject":{"Task":{"id":"TASK-2"}},"trigger_source":"t","workflow_ref":"standard"}')`,
	`PRAGMA user_version = 1`,
}

func writeSchema032(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sqlitex.Open(context.Background(), sqlitex.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range schema032 {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// A 0.3.2 file is upgraded in place once, however many processes open it
// at once, and reopening migrates nothing (§5.4 (25)).
func TestMigrateSchema032Concurrently(t *testing.T) {
	sqliteOnly(t, "migrates a 0.3.2 SQLite file in place")
	path := filepath.Join(t.TempDir(), "queue.sqlite")
	writeSchema032(t, path)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			st, err := sqlitestore.Open(context.Background(), sqlitestore.Options{Path: path, BusyTimeout: 5 * time.Second})
			if err == nil {
				err = st.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent open of a 0.3.2 file: %v", err)
		}
	}
	st, err := sqlitestore.Open(context.Background(), sqlitestore.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.View(context.Background(), func(r storage.Store) error {
		e, err := r.Get(context.Background(), "old-a")
		if err != nil {
			return err
		}
		want := time.Date(2026, 6, 14, 11, 0, 0, 500_000_000, time.UTC).UnixNano()
		if e.AssignedAtNS == nil || *e.AssignedAtNS != want || e.Ticketed() || e.QualifiedID != nil || e.LeaseGeneration != 0 {
			t.Errorf("migrated row %+v", e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Entries written by 0.3.2 work through both surfaces after the upgrade:
// an old pending entry blocks a v2 add and gets identity then, another
// gets it at its first v2 hand-out, and the stuck old-style lease is
// reclaimed by age once the TTL is on.
func TestMigratedEntriesGetIdentity(t *testing.T) {
	sqliteOnly(t, "starts from a 0.3.2 SQLite file")
	dir := t.TempDir()
	writeSchema032(t, filepath.Join(dir, ".animus", "queue.sqlite"))
	f := &fixture{t: t, dir: dir, now: t0}
	f.s = New(testConfig{Rules: Rules{LeaseTTL: time.Minute}}.options(t, Options{Now: func() time.Time { return f.now }}))
	if err := f.serve(bound(rootBinding(dir))); err != nil {
		t.Fatal(err)
	}
	if r := f.add(addParams("TASK-2", "")); r.Enqueued || r.EntryID != "old-c" || r.Subject.Generation != 1 {
		t.Errorf("v2 add over an old pending entry: %+v", r)
	}
	// old-a is assigned old-style: never a v2 candidate, so no identity;
	// old-b, the pending copy of TASK-1, gets generation 1 at hand-out.
	r := f.leaseV2(5, "d")
	if len(r.Leased) != 2 || r.Leased[0].Entry.EntryID != "old-b" || r.Leased[0].Execution.Subject.Generation != 1 ||
		r.Leased[1].Entry.EntryID != "old-c" || r.Leased[0].Execution.Repository != nil {
		t.Errorf("v2 lease of migrated entries: %s", mustJSON(r))
	}
	var old struct{ Leased []wire.Entry }
	f.h.OK(t, "queue/lease", `{"max":1,"workflow_ids":["again"]}`, &old)
	if len(old.Leased) != 1 || old.Leased[0].EntryID != "old-a" {
		t.Errorf("stuck old-style lease not reclaimed: %s", mustJSON(old))
	}
	f.want("queue/stats", "", `{"assigned":3,"deferred":0,"held":0,"pending":0,"total":3}`)
}
