// Package importer is `animus-durable-postgres import --from-sqlite FILE`:
// an operator moving workflows from one host to several copies an
// animus-durable-sqlite database (runs with their epochs, every step in
// every state, the counters) into the configured namespace in one
// transaction. A namespace that already holds anything is refused.
package importer

import (
	"context"
	"fmt"
	"io"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/plugins/durable-postgres/internal/backend"
	"github.com/animus-plugins/animus-plugins/plugins/durable-postgres/internal/config"
)

// Run is the import command. It returns the exit code: 0, 1 for a
// failure, 2 for bad usage.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return pgkit.Import{
		Binary:   backend.Name,
		What:     "durable store",
		FileHelp: "the animus-durable-sqlite database file (<project_root>/.animus/durable.sqlite by default)",
		Run: func(ctx context.Context, from string) (string, error) {
			cfg, err := config.Load(getenv)
			if err != nil {
				return "", err
			}
			return run(ctx, cfg, from)
		},
	}.Main(ctx, args, stdout, stderr)
}

func run(ctx context.Context, cfg config.Config, from string) (string, error) {
	src, err := sqlitestore.Open(ctx, from, sqlitestore.Options{})
	if err != nil {
		return "", fmt.Errorf("open %s: %w", from, err)
	}
	defer src.Close()
	dump, err := sqlitestore.Export(ctx, src)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", from, err)
	}
	db, err := cfg.Open(backend.Name)
	if err != nil {
		return "", err
	}
	dst, err := pgstore.Open(ctx, pgstore.Options{DB: db, LockTimeout: cfg.LockTimeout})
	if err != nil {
		return "", fmt.Errorf("open schema %q: %w", cfg.Schema, err)
	}
	defer dst.Close()
	if err := dst.Import(ctx, dump); err != nil {
		return "", err
	}
	return fmt.Sprintf("imported %s into schema %q: %d runs, %d steps", from, cfg.Schema, len(dump.Runs), len(dump.Steps)), nil
}
