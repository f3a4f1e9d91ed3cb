package sqlitestore

import (
	"context"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage/storagetest"
)

func TestEventRetention(t *testing.T) {
	s := openStore(t, tempDB(t), nil)
	ctx := context.Background()
	sub := storagetest.NewSubject(t, s, "task", nil)
	// Pretend the log is already long: pruning keeps the newest entries.
	if _, err := s.db.Exec(`UPDATE sqlite_sequence SET seq = ? WHERE name = 'subject_events'`, 40*256-2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, storagetest.NativeID(sub), nil, storagetest.AddLabel("x")); err != nil { // seq 40*256-1
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, storagetest.NativeID(sub), nil, storagetest.AddLabel("y")); err != nil { // seq 40*256: prunes seq <= 40*256-retention
		t.Fatal(err)
	}
	var n int
	s.db.QueryRow(`SELECT COUNT(*) FROM subject_events`).Scan(&n)
	if n != 2 {
		t.Fatalf("%d events kept; the created event (seq 1) should have been pruned", n)
	}
}
