package sqlitex

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var schema = []Migration{
	{1, "counters", SQL(`CREATE TABLE counters (name TEXT PRIMARY KEY, n INTEGER NOT NULL)`)},
	{2, "seed", SQL(`INSERT INTO counters (name, n) VALUES ('hits', 0)`)},
}

func open(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), Options{Path: path, BusyTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenSetsPragmas(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "nested", "dir", "x.db"))
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "foreign_keys": "1", "busy_timeout": "10000"} {
		var got string
		if err := db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
}

func TestMigrateConcurrentOpeners(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	var wg sync.WaitGroup
	results := make(chan [2]int, 4)
	for range 4 { // four pools on one file stand in for four processes
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := open(t, path)
			from, to, err := db.Migrate(context.Background(), schema)
			if err != nil {
				t.Error(err)
				return
			}
			results <- [2]int{from, to}
		}()
	}
	wg.Wait()
	close(results)
	applied := 0
	for r := range results {
		if r[1] != 2 {
			t.Errorf("migrated to %d, want 2", r[1])
		}
		if r[0] == 0 {
			applied++
		}
	}
	if applied != 1 {
		t.Errorf("%d openers applied the migrations, want exactly 1", applied)
	}
	var rows int
	if err := open(t, path).QueryRow(`SELECT count(*) FROM counters`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("seed applied %d times (%v)", rows, err)
	}
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "n.db"))
	if _, _, err := db.Migrate(context.Background(), schema); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Migrate(context.Background(), schema[:1]); err == nil {
		t.Fatal("an older binary migrated a newer database")
	}
}

func TestTxIsAtomicAcrossWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	if _, _, err := open(t, path).Migrate(context.Background(), schema); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		db := open(t, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 { // read-modify-write: lost updates would show
				err := db.Tx(context.Background(), func(tx *sql.Tx) error {
					var n int
					if err := tx.QueryRow(`SELECT n FROM counters WHERE name='hits'`).Scan(&n); err != nil {
						return err
					}
					_, err := tx.Exec(`UPDATE counters SET n=? WHERE name='hits'`, n+1)
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var n int
	open(t, path).QueryRow(`SELECT n FROM counters WHERE name='hits'`).Scan(&n)
	if n != 200 {
		t.Fatalf("counter = %d after 200 increments", n)
	}
}

func TestTxRollsBackOnError(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "r.db"))
	if _, _, err := db.Migrate(context.Background(), schema); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := db.Tx(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE counters SET n=99`); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Tx returned %v", err)
	}
	var n int
	db.QueryRow(`SELECT n FROM counters`).Scan(&n)
	if n != 0 {
		t.Fatalf("a failed transaction left n=%d", n)
	}
	_, err = db.Exec(`INSERT INTO counters (name, n) VALUES ('hits', 1)`)
	if !IsConstraint(err) || IsBusy(err) {
		t.Fatalf("duplicate key: IsConstraint=%v IsBusy=%v (%v)", IsConstraint(err), IsBusy(err), err)
	}
}

func TestBusyTimeoutClassified(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.db")
	holder := open(t, path)
	if _, _, err := holder.Migrate(context.Background(), schema); err != nil {
		t.Fatal(err)
	}
	impatient, err := Open(context.Background(), Options{Path: path, BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	tx, err := holder.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	err = impatient.Tx(context.Background(), func(tx *sql.Tx) error { return nil })
	if !IsBusy(err) {
		t.Fatalf("second writer got %v, want a busy error", err)
	}
}

func TestMigrateCurrentTakesNoWriteLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db := open(t, path)
	if _, _, err := db.Migrate(context.Background(), schema); err != nil {
		t.Fatal(err)
	}
	// Another process holds the write lock; a current database must still
	// open and "migrate" at once.
	tx, err := open(t, path).BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	impatient, err := Open(context.Background(), Options{Path: path, BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	from, to, err := impatient.Migrate(context.Background(), schema)
	if err != nil || from != 2 || to != 2 {
		t.Fatalf("Migrate on a current database under another writer: %d→%d, %v", from, to, err)
	}
	if _, _, err := impatient.Migrate(context.Background(), schema[:1]); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("older binary: %v, want ErrNewerSchema", err)
	}
}

func TestViewIsASnapshotBesideAWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.db")
	db := open(t, path)
	if _, _, err := db.Migrate(context.Background(), schema); err != nil {
		t.Fatal(err)
	}
	writer := open(t, path)
	err := db.View(context.Background(), func(q Querier) error {
		var before, after int
		if err := q.QueryRowContext(context.Background(), `SELECT n FROM counters`).Scan(&before); err != nil {
			return err
		}
		// A commit by another connection in the middle of the snapshot,
		// which must neither wait for the reader nor show up in it.
		if _, err := writer.Exec(`UPDATE counters SET n = n + 5`); err != nil {
			return err
		}
		if err := q.QueryRowContext(context.Background(), `SELECT n FROM counters`).Scan(&after); err != nil {
			return err
		}
		if before != after {
			t.Errorf("snapshot saw %d then %d", before, after)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	db.QueryRow(`SELECT n FROM counters`).Scan(&n)
	if n != 5 {
		t.Fatalf("after the view, n = %d, want 5", n)
	}
}

// TestStmtCacheFollowsSchemaChanges: a statement kept in the per-connection
// cache still sees a schema another process changed after it was prepared
// (SQLite re-prepares it), and the cache can be turned off.
func TestStmtCacheFollowsSchemaChanges(t *testing.T) {
	for _, size := range []int{0, -1} {
		path := filepath.Join(t.TempDir(), "c.db")
		db, err := Open(context.Background(), Options{Path: path, MaxConns: 1, StmtCache: size})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		other := open(t, path) // another process's pool on the same file
		if _, err := other.Exec(`CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1)`); err != nil {
			t.Fatal(err)
		}
		columns := func() []string {
			t.Helper()
			rows, err := db.Query(`SELECT * FROM t`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			cols, err := rows.Columns()
			if err != nil {
				t.Fatal(err)
			}
			return cols
		}
		if got := columns(); len(got) != 1 {
			t.Fatalf("StmtCache %d: columns %v before the change", size, got)
		}
		if _, err := other.Exec(`ALTER TABLE t ADD COLUMN b TEXT`); err != nil {
			t.Fatal(err)
		}
		if got := columns(); len(got) != 2 {
			t.Errorf("StmtCache %d: columns %v after ADD COLUMN, want [a b]", size, got)
		}
	}
}
