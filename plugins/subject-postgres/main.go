// Command animus-subject-postgres is an Animus subject backend that keeps
// subjects (tasks, issues, …) in PostgreSQL, so daemons, CLIs and
// dashboards on several machines share one task list, and a change made
// on one host reaches every open watch on the others (LISTEN/NOTIFY over
// a durable change log). It answers exactly as animus-subject-sqlite
// does: both serve pkg/subjectkit's rules over their own store.
package main

import (
	"context"
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/subjects"
	"github.com/animus-plugins/animus-plugins/plugins/subject-postgres/internal/backend"
	"github.com/animus-plugins/animus-plugins/plugins/subject-postgres/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/subject-postgres/internal/importer"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	// A bad setting is reported by Preflight (serving) or by import, never
	// by --manifest. Nothing here dials, and the store opens on the first
	// domain call (Lazy): initialize must not wait for the database.
	cfg, cfgErr := config.Load(getenv)
	app := subjects.New(subjects.Options{Rules: cfg.Rules, Open: backend.Opener(cfg), Lazy: true})
	mux := pluginkit.NewMux()
	app.Register(mux)
	return pluginkit.Plugin{
		Name:        backend.Name,
		Kind:        "subject_backend",
		Description: "Subjects (tasks, issues, …) in PostgreSQL, shared by daemons on several machines, with a cross-host live watch",
		Env:         config.Env,
		// The DSN is redacted whole as a sensitive variable; its password
		// alone too (a driver error may quote it without the rest).
		Secrets:           []string{pgkit.Password(cfg.DSN)},
		Mux:               mux,
		ExtraCapabilities: app.Markers(),
		SubjectKinds:      cfg.Kinds,
		Streaming:         true,
		Preflight:         func(context.Context) error { return cfg.Check(backend.Name, cfgErr) },
		Init:              app.Init,
		Health:            app.Health,
		Close:             app.Close,
		Commands: map[string]pluginkit.Command{
			"import": {
				Summary: "--from-sqlite FILE: copy an animus-subject-sqlite database into the namespace (which must be empty), in one transaction",
				Run: func(ctx context.Context, args []string) int {
					return importer.Run(ctx, args, getenv, os.Stdout, os.Stderr)
				},
			},
		},
	}
}
