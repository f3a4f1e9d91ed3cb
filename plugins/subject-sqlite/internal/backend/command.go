package backend

import (
	"context"
	"fmt"
	"io"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/config"
)

// MigrateCommand is `animus-subject-sqlite migrate`: for operators who run
// with ANIMUS_SQLITE_AUTO_MIGRATE=false and upgrade the schema by hand.
func MigrateCommand(cfg config.Config, cfgErr error, stdout, stderr io.Writer) pluginkit.Command {
	return pluginkit.Command{
		Summary: "apply pending schema migrations to the database and exit",
		Run: func(ctx context.Context, _ []string) int {
			if cfgErr != nil {
				fmt.Fprintf(stderr, "invalid configuration: %v\n", cfgErr)
				return 1
			}
			st, err := sqlitestore.Open(ctx, sqlitestore.Options{Path: cfg.DBPath, BusyTimeout: cfg.BusyTimeout, AutoMigrate: true})
			if err != nil {
				fmt.Fprintf(stderr, "migrate: %v\n", err)
				return 1
			}
			defer st.Close()
			from, to := st.Versions()
			fmt.Fprintf(stdout, "%s: schema version %d -> %d\n", cfg.DBPath, from, to)
			return 0
		},
	}
}
