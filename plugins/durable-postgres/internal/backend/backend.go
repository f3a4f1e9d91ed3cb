// Package backend opens the PostgreSQL step log: the one piece of the
// durable store that is this plugin's own (the rules are
// pkg/durablekit's, the SQL pkg/durablekit/pgstore's, the connection
// handling pkg/pgkit's).
package backend

import (
	"context"
	"errors"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/durable"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/durable-postgres/internal/config"
)

// Name is the binary's name, as the manifest and error messages say it.
const Name = "animus-durable-postgres"

// Opener returns the durable.Options.Open of cfg. Every project a daemon
// binds shares the namespace's step log: a workflow begun on one host is
// recovered on another, whose project root differs.
func Opener(cfg config.Config) func(ctx context.Context, root string) (storage.Store, error) {
	return func(ctx context.Context, root string) (storage.Store, error) {
		db, err := cfg.Open(Name)
		if err != nil {
			return nil, pluginkit.Unavailable("the PostgreSQL connection settings are not usable: %v", err).WithCode(durable.CodeBackendUnavailable)
		}
		st, err := pgstore.Open(ctx, pgstore.Options{DB: db, LockTimeout: cfg.LockTimeout})
		if errors.Is(err, pgkit.ErrNewerSchema) {
			return nil, pluginkit.Unavailable("the step log schema %q was written by a newer %s; upgrade the plugin", cfg.Schema, Name).
				WithCode(durable.CodeBackendUnavailable).Wrap(err)
		}
		return st, err
	}
}
