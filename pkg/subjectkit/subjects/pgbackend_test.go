package subjects

import (
	"context"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// postgresBackend opens a fresh namespace on the test cluster; every Open
// (the host's, openOther's) is another handle on the same namespace, as a
// second process or host would have.
func postgresBackend(t *testing.T, rules Rules) func(ctx context.Context, root string, onCommit func()) (storage.Store, error) {
	t.Helper()
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	return func(ctx context.Context, _ string, onCommit func()) (storage.Store, error) {
		db, err := pgkit.Open(pgkit.Options{DSN: dsn, Schema: schema, AppName: "subjects-test"})
		if err != nil {
			return nil, err
		}
		return pgstore.Open(ctx, pgstore.Options{DB: db, Hints: rules.Hints, OnCommit: onCommit})
	}
}
