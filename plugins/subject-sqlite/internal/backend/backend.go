// Package backend opens the SQLite subject store for a bound project: the
// one piece of the subject backend that is this plugin's own (the rules
// are pkg/subjectkit/subjects', the SQL pkg/subjectkit/sqlitestore's).
package backend

import (
	"context"
	"errors"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/config"
)

// Opener returns the subjects.Options.Open of cfg. A relative database
// path is taken from the project root the host sent, or from the working
// directory, which the daemon sets to the project root.
func Opener(cfg config.Config) func(ctx context.Context, root string, onCommit func()) (storage.Store, error) {
	return func(ctx context.Context, root string, onCommit func()) (storage.Store, error) {
		path := pluginkit.ProjectPath(root, cfg.DBPath, config.DefaultDBPath)
		st, err := sqlitestore.Open(ctx, sqlitestore.Options{
			Path: path, BusyTimeout: cfg.BusyTimeout, AutoMigrate: cfg.AutoMigrate, Hints: cfg.Hints, OnCommit: onCommit,
		})
		if errors.Is(err, sqlitestore.ErrSchemaBehind) {
			return nil, pluginkit.Unavailable("%s", err.Error()).Wrap(err)
		}
		if err != nil {
			return nil, pluginkit.Unavailable("cannot open the subject database; check %s (the cause is in the plugin's log)", config.EnvDBPath).Wrap(err)
		}
		return st, nil
	}
}
