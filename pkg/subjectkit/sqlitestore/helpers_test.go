package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

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
