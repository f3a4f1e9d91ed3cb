// Command animus-durable-sqlite is an Animus durable_store plugin: it keeps
// the reservation-fenced step log that makes side effects (model calls,
// emails, git pushes) run exactly once across crashes, in a SQLite file in
// the bound project (<project_root>/.animus/durable.sqlite).
//
// The step log's rules and protocol live in pkg/durablekit (shared with
// every durable store backend), its SQL in pkg/durablekit/sqlitestore;
// internal/ holds this plugin's configuration and how it opens its file.
package main

import (
	"context"
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/durable"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/durable-sqlite/internal/backend"
	"github.com/animus-plugins/animus-plugins/plugins/durable-sqlite/internal/config"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	// A bad value is reported by Preflight, never by --manifest, which
	// must work whatever the environment holds.
	cfg, cfgErr := config.Load(getenv)
	svc := durable.New(durable.Options{Rules: cfg.Rules, Open: backend.Opener(cfg)})
	mux := pluginkit.NewMux()
	svc.Register(mux)
	return pluginkit.Plugin{
		Name:             "animus-durable-sqlite",
		Kind:             "durable_store",
		Description:      "SQLite durable step store: reservation-fenced, crash-proof exactly-once steps for Animus workflows",
		Env:              config.Env,
		Mux:              mux,
		KindCapabilities: svc.KindCapabilities(),
		// One request at a time, in arrival order: a host that pipelines
		// begin_workflow_run and begin_step sees them applied in that order.
		// Concurrency between callers is between processes, through SQLite.
		Serial:    true,
		Preflight: func(context.Context) error { return cfgErr },
		Init:      svc.Init,
		Health:    svc.Health,
		Close:     svc.Close,
	}
}
