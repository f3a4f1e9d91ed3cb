// Package backend opens the PostgreSQL subject namespace: the one piece of
// the subject backend that is this plugin's own (the rules are
// pkg/subjectkit's, the SQL pkg/subjectkit/pgstore's, the connection
// handling pkg/pgkit's).
package backend

import (
	"context"
	"errors"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
	"github.com/animus-plugins/animus-plugins/plugins/subject-postgres/internal/config"
)

// Name is the binary's name, as the manifest and error messages say it.
const Name = "animus-subject-postgres"

// Opener returns the subjects.Options.Open of cfg. Every project a daemon
// binds shares the namespace: that is the point, one task list for every
// host.
func Opener(cfg config.Config) func(ctx context.Context, root string, onCommit func()) (storage.Store, error) {
	return func(ctx context.Context, _ string, onCommit func()) (storage.Store, error) {
		db, err := cfg.Open(Name)
		if err != nil {
			return nil, pluginkit.Unavailable("the PostgreSQL connection settings are not usable: %v", err)
		}
		st, err := pgstore.Open(ctx, pgstore.Options{DB: db, LockTimeout: cfg.LockTimeout, Hints: cfg.Hints, OnCommit: onCommit})
		if errors.Is(err, pgkit.ErrNewerSchema) {
			return nil, pluginkit.Unavailable("the subject schema %q was written by a newer %s; upgrade the plugin", cfg.Schema, Name).Wrap(err)
		}
		return st, err
	}
}
