// Package importer is `animus-queue-postgres import --from-sqlite FILE`:
// an operator moving a queue from one host to several copies an
// animus-queue-sqlite database (live entries in their order, ticket
// generations, finished entries, idempotency bindings, the audit trail)
// into the configured namespace in one transaction. A namespace that
// already holds anything is refused, so an import never merges two
// queues or runs twice.
package importer

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/pgstore"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/sqlitestore"
	"github.com/animus-plugins/animus-plugins/plugins/queue-postgres/internal/backend"
	"github.com/animus-plugins/animus-plugins/plugins/queue-postgres/internal/config"
)

// Run is the import command. It returns the exit code: 0, 1 for a
// failure, 2 for bad usage.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var project *string
	return pgkit.Import{
		Binary:   backend.Name,
		What:     "queue",
		FileHelp: "the animus-queue-sqlite database file (<project_root>/.animus/queue.sqlite by default)",
		Flags: func(fs *flag.FlagSet) string {
			project = fs.String("project", "", "project root recorded with the imported entries (default: two levels above FILE)")
			return " [--project DIR]"
		},
		Run: func(ctx context.Context, from string) (string, error) {
			cfg, err := config.FromEnv(getenv)
			if err != nil {
				return "", err
			}
			n, err := run(ctx, cfg, from, *project)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("imported %s into schema %q: %d live entries, %d finished, %d subject generations, %d idempotency keys, %d audit rows",
				from, cfg.Schema, n.Entries, n.Finished, n.Generations, n.Bindings, n.Audit), nil
		},
	}.Main(ctx, args, stdout, stderr)
}

// Counts says what an import copied.
type Counts struct{ Entries, Finished, Generations, Bindings, Audit int }

// run copies the file; a 0.3.2 file is upgraded in place by the same
// migration the SQLite plugin runs.
func run(ctx context.Context, cfg config.Config, from, project string) (Counts, error) {
	src, err := sqlitestore.Open(ctx, sqlitestore.Options{Path: from})
	if err != nil {
		return Counts{}, fmt.Errorf("open %s: %w", from, err)
	}
	defer src.Close()
	dump, err := sqlitestore.Export(ctx, src)
	if err != nil {
		return Counts{}, fmt.Errorf("read %s: %w", from, err)
	}
	db, err := cfg.Open(backend.Name)
	if err != nil {
		return Counts{}, err
	}
	defer db.Close()
	dst, err := pgstore.Open(ctx, pgstore.Options{DB: db, ProjectRoot: projectOf(from, project), LockTimeout: cfg.LockTimeout})
	if err != nil {
		return Counts{}, fmt.Errorf("open schema %q: %w", cfg.Schema, err)
	}
	defer dst.Close()
	if err := dst.Import(ctx, dump); err != nil {
		return Counts{}, err
	}
	return Counts{Entries: len(dump.Entries), Finished: len(dump.Finished), Generations: len(dump.Generations),
		Bindings: len(dump.Bindings), Audit: len(dump.Audit)}, nil
}

// projectOf is the project root recorded with imported entries: the one
// given, else the root the SQLite plugin's default path implies
// (<root>/.animus/queue.sqlite), else the file's directory.
func projectOf(file, project string) string {
	if project != "" {
		if abs, err := filepath.Abs(project); err == nil {
			return abs
		}
		return project
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	dir := filepath.Dir(abs)
	if filepath.Base(dir) == ".animus" {
		return filepath.Dir(dir)
	}
	return dir
}
