package sqlitestore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

type scanner interface{ Scan(dest ...any) error }

// scanRow reads one subject (storage.Columns). Children are filled by the
// caller.
func scanRow(r scanner) (*model.Subject, error) {
	var row storage.Row
	if err := r.Scan(row.Dest()...); err != nil {
		return nil, err
	}
	return row.Subject()
}

// busyReason is what the host reads when another process held the write
// lock past the busy timeout.
const busyReason = "the database stayed locked by another process past the busy timeout; retry"

// wrap gives SQLite's failures the kit's meaning: a busy lock is
// retryable, a UNIQUE violation a conflict.
func wrap(err error) error {
	switch {
	case err == nil, errors.Is(err, storage.ErrNotFound):
		return err
	case errors.Is(err, sql.ErrNoRows):
		return storage.ErrNotFound
	case sqlitex.IsBusy(err):
		return &storage.UnavailableError{Reason: busyReason, Err: err}
	case sqlitex.IsConstraint(err):
		return errors.Join(storage.ErrConflict, err)
	}
	return err
}

// querier is a *sql.DB or *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}
