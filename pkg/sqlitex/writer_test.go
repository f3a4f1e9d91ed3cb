package sqlitex

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func writer(t *testing.T, db *DB) *Writer {
	t.Helper()
	w, err := db.Writer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestWriterLevels: each transaction runs at the synchronous level it
// asked for, whatever the one before it used, and a level that is not
// FULL or NORMAL is refused without touching the database.
func TestWriterLevels(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "w.db"))
	if _, _, err := db.Migrate(context.Background(), schema); err != nil {
		t.Fatal(err)
	}
	w := writer(t, db)
	for i, tc := range []struct {
		level Synchronous
		want  int // PRAGMA synchronous inside the transaction
	}{
		{SyncFull, 2}, {SyncNormal, 1}, {SyncNormal, 1}, {SyncFull, 2}, {SyncNormal, 1},
	} {
		var got int
		err := w.Tx(context.Background(), tc.level, func(_ context.Context, tx *sql.Tx) error {
			if err := tx.QueryRow("PRAGMA synchronous").Scan(&got); err != nil {
				return err
			}
			_, err := tx.Exec(`UPDATE counters SET n = n + 1 WHERE name = 'hits'`)
			return err
		})
		if err != nil {
			t.Fatalf("transaction %d (%s): %v", i, tc.level, err)
		}
		if got != tc.want {
			t.Fatalf("transaction %d asked for %s and ran at synchronous=%d", i, tc.level, got)
		}
	}
	if err := w.Tx(context.Background(), "OFF", func(context.Context, *sql.Tx) error { return nil }); err == nil {
		t.Fatal("synchronous=OFF was accepted")
	}
	var n int
	db.QueryRow(`SELECT n FROM counters WHERE name = 'hits'`).Scan(&n)
	if n != 5 {
		t.Fatalf("counter = %d after 5 committed transactions", n)
	}
}

// TestWriterOneAtATime: the process's write transactions never overlap,
// a failed one rolls back, and one whose context ends while it waits for
// its turn gives up with the context's error.
func TestWriterOneAtATime(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "o.db"))
	if _, _, err := db.Migrate(context.Background(), schema); err != nil {
		t.Fatal(err)
	}
	w := writer(t, db)
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	boom := errors.New("boom")
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				level := SyncFull
				if j%2 == 0 {
					level = SyncNormal
				}
				err := w.Tx(context.Background(), level, func(_ context.Context, tx *sql.Tx) error {
					n := inside.Add(1)
					defer inside.Add(-1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					if _, err := tx.Exec(`UPDATE counters SET n = n + 1 WHERE name = 'hits'`); err != nil {
						return err
					}
					if i == 0 && j == 0 {
						return boom // rolled back: not counted
					}
					return nil
				})
				if err != nil && !errors.Is(err, boom) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Fatalf("%d write transactions ran at once", m)
	}
	var n int
	db.QueryRow(`SELECT n FROM counters WHERE name = 'hits'`).Scan(&n)
	if n != 8*20-1 {
		t.Fatalf("counter = %d, want %d (one transaction rolled back)", n, 8*20-1)
	}

	held := make(chan struct{})
	release := make(chan struct{})
	go w.Tx(context.Background(), SyncFull, func(context.Context, *sql.Tx) error {
		close(held)
		<-release
		return nil
	})
	<-held
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := w.Tx(ctx, SyncFull, func(context.Context, *sql.Tx) error { return nil })
	close(release)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a transaction waiting past its deadline returned %v", err)
	}
}
