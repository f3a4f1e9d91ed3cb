package sqlitestore

import (
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage/storagetest"
)

// TestStore runs the backend-neutral store suite on SQLite files; every
// Open is another pool on the same file, as another process has.
func TestStore(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, hints model.Hints) storagetest.DB {
		path := tempDB(t)
		var first *Store
		return storagetest.DB{
			Open: func(t *testing.T) storage.Store {
				s := openStore(t, path, hints)
				if first == nil {
					first = s
				}
				return s
			},
			Count: func(t *testing.T, table string) int {
				t.Helper()
				var n int
				if err := first.db.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			},
		}
	})
}
