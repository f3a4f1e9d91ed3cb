// Package backend opens the SQLite queue of a bound project: the one
// piece of the queue that is this plugin's own (the semantics are
// pkg/queuekit/queue's, the SQL pkg/queuekit/sqlitestore's).
package backend

import (
	"context"
	"errors"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/plugins/queue-sqlite/internal/config"
)

// Opener returns the queue.Options.Open of cfg: the project's file under
// its root (or the configured path).
func Opener(cfg config.Config) func(ctx context.Context, root string) (storage.Store, error) {
	return func(ctx context.Context, root string) (storage.Store, error) {
		st, err := sqlitestore.Open(ctx, sqlitestore.Options{Path: cfg.ResolveDB(root), BusyTimeout: cfg.BusyTimeout})
		switch {
		case err == nil:
			return st, nil
		case errors.Is(err, sqlitestore.ErrNewerSchema):
			return nil, pluginkit.Unavailable("the queue database was written by a newer animus-queue-sqlite; upgrade the plugin").Wrap(err)
		case errors.As(err, new(*storage.UnavailableError)):
			return nil, err // a busy timeout: -32205
		}
		return nil, pluginkit.Unavailable("cannot open the queue database").Wrap(err)
	}
}
