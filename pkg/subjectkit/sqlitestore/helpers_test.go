package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

func openStore(t *testing.T, path string, hints model.Hints) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{Path: path, BusyTimeout: 10 * time.Second, AutoMigrate: true, Hints: hints})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func tempDB(t *testing.T) string { return filepath.Join(t.TempDir(), "subjects.db") }

// newSubject inserts a subject built by fill.
func newSubject(t *testing.T, s *Store, kind string, fill func(*model.Subject)) *model.Subject {
	t.Helper()
	native := ulid.Make().String()
	now := time.Now().UTC()
	sub := &model.Subject{ID: kind + ":" + native, Kind: kind, Title: "t " + native, Status: model.Ready,
		CreatedAt: model.Time{Time: now}, UpdatedAt: model.Time{Time: now}}
	if fill != nil {
		fill(sub)
	}
	out, err := s.Create(context.Background(), sub, native)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func nativeID(s *model.Subject) string { return nativeOf(s.ID) }
