// Package importer is `animus-subject-postgres import --from-sqlite FILE`:
// a team moving its task list from one machine to several copies an
// animus-subject-sqlite database (subjects with their ids, seqs, labels
// and comments) into the configured namespace in one transaction. A
// namespace that already holds anything is refused.
package importer

import (
	"context"
	"fmt"
	"io"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/plugins/subject-postgres/internal/backend"
	"github.com/animus-plugins/animus-plugins/plugins/subject-postgres/internal/config"
)

// Run is the import command. It returns the exit code: 0, 1 for a
// failure, 2 for bad usage.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return pgkit.Import{
		Binary:   backend.Name,
		What:     "subject",
		FileHelp: "the animus-subject-sqlite database file (<project_root>/.animus/subjects/sqlite.db by default)",
		Run: func(ctx context.Context, from string) (string, error) {
			cfg, err := config.Load(getenv)
			if err != nil {
				return "", err
			}
			return run(ctx, cfg, from, stdout)
		},
	}.Main(ctx, args, stdout, stderr)
}

func run(ctx context.Context, cfg config.Config, from string, stdout io.Writer) (string, error) {
	// Migrating brings a Rust-made or older file to the current schema
	// first, as animus-subject-sqlite itself would on its next start.
	src, err := sqlitestore.Open(ctx, sqlitestore.Options{Path: from, AutoMigrate: true})
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
	dst, err := pgstore.Open(ctx, pgstore.Options{DB: db, LockTimeout: cfg.LockTimeout, Hints: cfg.Hints})
	if err != nil {
		return "", fmt.Errorf("open schema %q: %w", cfg.Schema, err)
	}
	defer dst.Close()
	if err := dst.Import(ctx, dump); err != nil {
		return "", err
	}
	// The subjects are in; statistics are a courtesy to the first lists.
	if err := dst.Vacuum(ctx); err != nil {
		fmt.Fprintf(stdout, "imported, but VACUUM (ANALYZE) failed (autovacuum will catch up): %v\n", err)
	}
	return fmt.Sprintf("imported %s into schema %q: %d subjects, %d comments", from, cfg.Schema, len(dump.Subjects), len(dump.Comments)), nil
}
