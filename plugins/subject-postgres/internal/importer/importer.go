// Package importer is `animus-subject-postgres import --from-sqlite FILE`:
// a team moving its task list from one machine to several copies an
// animus-subject-sqlite database (subjects with their ids, seqs, labels
// and comments) into the configured namespace in one transaction. A
// namespace that already holds anything is refused.
package importer

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/plugins/subject-postgres/internal/backend"
	"github.com/animus-plugins/animus-plugins/plugins/subject-postgres/internal/config"
)

// Run is the import command. It returns the exit code: 0, 1 for a
// failure, 2 for bad usage.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from-sqlite", "", "the animus-subject-sqlite database file (<project_root>/.animus/subjects/sqlite.db by default)")
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
			return fmt.Errorf("no subject database at %s", from)
		}
		return err
	}
	// Migrating brings a Rust-made or older file to the current schema
	// first, as animus-subject-sqlite itself would on its next start.
	src, err := sqlitestore.Open(ctx, sqlitestore.Options{Path: from, AutoMigrate: true})
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
	dst, err := pgstore.Open(ctx, pgstore.Options{DB: db, LockTimeout: cfg.LockTimeout, Hints: cfg.Hints})
	if err != nil {
		return fmt.Errorf("open schema %q: %w", cfg.Schema, err)
	}
	defer dst.Close()
	if err := dst.Import(ctx, dump); err != nil {
		return err
	}
	// The subjects are in; statistics are a courtesy to the first lists.
	if err := dst.Vacuum(ctx); err != nil {
		fmt.Fprintf(stdout, "imported, but VACUUM (ANALYZE) failed (autovacuum will catch up): %v\n", err)
	}
	fmt.Fprintf(stdout, "imported %s into schema %q: %d subjects, %d comments\n", from, cfg.Schema, len(dump.Subjects), len(dump.Comments))
	return nil
}
