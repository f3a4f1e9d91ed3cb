// Package backend opens the SQLite step log of a bound project: the one
// piece of the durable store that is this plugin's own (the rules are
// pkg/durablekit's, the SQL pkg/durablekit/sqlitestore's).
package backend

import (
	"context"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/plugins/durable-sqlite/internal/config"
)

// Opener returns the durable.Options.Open of cfg: the project's file under
// its root (or the configured path).
func Opener(cfg config.Config) func(ctx context.Context, root string) (storage.Store, error) {
	return func(ctx context.Context, root string) (storage.Store, error) {
		return sqlitestore.Open(ctx, cfg.Path(root), sqlitestore.Options{BusyTimeout: cfg.BusyTimeout})
	}
}
