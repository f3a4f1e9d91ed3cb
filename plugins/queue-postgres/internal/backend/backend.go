// Package backend opens the PostgreSQL queue: the one piece of the queue
// that is this plugin's own (the semantics are pkg/queuekit/queue's, the
// SQL pkg/queuekit/pgstore's, the connection handling pkg/pgkit's).
package backend

import (
	"context"
	"errors"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/plugins/queue-postgres/internal/config"
)

// Name is the binary's name, as the manifest and error messages say it.
const Name = "animus-queue-postgres"

// Opener returns the queue.Options.Open of cfg. Every project a daemon
// binds shares the one queue of the namespace: the binding is recorded
// with each entry, not used as a key, because one project has a
// different root on every machine.
func Opener(cfg config.Config) func(ctx context.Context, root string) (storage.Store, error) {
	return func(ctx context.Context, root string) (storage.Store, error) {
		db, err := cfg.Open(Name)
		if err != nil {
			return nil, pluginkit.Unavailable("the PostgreSQL connection settings are not usable: %v", err)
		}
		st, err := pgstore.Open(ctx, pgstore.Options{DB: db, ProjectRoot: root, LockTimeout: cfg.LockTimeout})
		if err == nil {
			return st, nil
		}
		db.Close()
		if errors.Is(err, pgkit.ErrNewerSchema) {
			return nil, pluginkit.Unavailable("the queue schema %q was written by a newer %s; upgrade the plugin", cfg.Schema, Name).Wrap(err)
		}
		return nil, err // *storage.UnavailableError (-32205) or a storage failure
	}
}
