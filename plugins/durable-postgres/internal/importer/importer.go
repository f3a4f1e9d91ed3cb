// Package importer is `animus-durable-postgres import --from-sqlite FILE`:
// an operator moving workflows from one host to several copies an
// animus-durable-sqlite database (runs with their epochs, every step in
// every state, the counters) into the configured namespace in one
// transaction. A namespace that already holds anything is refused.
package importer

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/plugins/durable-postgres/internal/backend"
	"github.com/animus-plugins/animus-plugins/plugins/durable-postgres/internal/config"
)

// Run is the import command. It returns the exit code: 0, 1 for a
// failure, 2 for bad usage.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from-sqlite", "", "the animus-durable-sqlite database file (<project_root>/.animus/durable.sqlite by default)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *from == "" {
		fmt.Fprintf(stderr, "usage: %s import --from-sqlite FILE\n", backend.Name)
		return 2
	}
	cfg, err := config.Load(getenv)
	if err == nil {
		err = run(ctx, cfg, *from, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s import: %v\n", backend.Name, err)
		return 1
	}
	return 0
}

func run(ctx context.Context, cfg config.Config, from string, stdout io.Writer) error {
	// Opening would create a missing file: an operator's typo must not.
	if _, err := os.Stat(from); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no durable store database at %s", from)
		}
		return err
	}
	src, err := sqlitestore.Open(ctx, from, sqlitestore.Options{})
	if err != nil {
		return fmt.Errorf("open %s: %w", from, err)
	}
	defer src.Close()
	dump, err := sqlitestore.Export(ctx, src)
	if err != nil {
		return fmt.Errorf("read %s: %w", from, err)
	}
	db, err := backend.Connect(cfg)
	if err != nil {
		return err
	}
	dst, err := pgstore.Open(ctx, pgstore.Options{DB: db, LockTimeout: cfg.LockTimeout})
	if err != nil {
		return fmt.Errorf("open schema %q: %w", cfg.Schema, err)
	}
	defer dst.Close()
	if err := dst.Import(ctx, dump); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "imported %s into schema %q: %d runs, %d steps\n", from, cfg.Schema, len(dump.Runs), len(dump.Steps))
	return nil
}
