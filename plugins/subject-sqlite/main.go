// Command animus-subject-sqlite is an Animus subject backend that keeps
// subjects (tasks, issues, …) in a local SQLite file: the zero-
// infrastructure task tracker that workflows read and update. Many plugin
// processes (daemon, CLI, workflow runner) may share the file at once.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/subjects"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/backend"
	"github.com/animus-plugins/animus-plugins/plugins/subject-sqlite/internal/config"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	// A bad configuration still yields a best-effort one, because
	// --manifest must describe the plugin whatever the environment;
	// serving fails in Preflight instead (stderr, exit 1).
	cfg, cfgErr := config.Load(getenv)
	app := subjects.New(subjects.Options{Rules: cfg.Rules, Open: backend.Opener(cfg)})
	mux := pluginkit.NewMux()
	app.Register(mux)
	return pluginkit.Plugin{
		Name:              "animus-subject-sqlite",
		Kind:              "subject_backend",
		Description:       "Subjects (tasks, issues, …) in a local SQLite file, shared safely by many processes, with cross-process watch",
		Env:               config.Env,
		Mux:               mux,
		ExtraCapabilities: app.Markers(),
		SubjectKinds:      cfg.Kinds,
		Streaming:         true,
		Preflight: func(context.Context) error {
			if cfgErr != nil {
				return fmt.Errorf("invalid configuration: %w", cfgErr)
			}
			return nil
		},
		Init:     app.Init,
		Health:   app.Health,
		Close:    app.Close,
		Commands: map[string]pluginkit.Command{"migrate": backend.MigrateCommand(cfg, cfgErr, os.Stdout, os.Stderr)},
	}
}
