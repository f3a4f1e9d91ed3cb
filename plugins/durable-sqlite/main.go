// Command animus-durable-sqlite is an Animus durable_store plugin: it keeps
// the reservation-fenced step log that makes side effects (model calls,
// emails, git pushes) run exactly once across crashes, in a SQLite file in
// the bound project (<project_root>/.animus/durable.sqlite).
//
// All logic lives in internal/durable (protocol) and internal/store (SQL).
package main

import (
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/durable-sqlite/internal/durable"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	svc := durable.New(getenv)
	mux := pluginkit.NewMux()
	svc.Register(mux)
	return pluginkit.Plugin{
		Name:             "animus-durable-sqlite",
		Kind:             "durable_store",
		Description:      "SQLite durable step store: reservation-fenced, crash-proof exactly-once steps for Animus workflows",
		Env:              durable.Env,
		Mux:              mux,
		KindCapabilities: svc.KindCapabilities(),
		// One request at a time, in arrival order: a host that pipelines
		// begin_workflow_run and begin_step sees them applied in that order.
		// Concurrency between callers is between processes, through SQLite.
		Serial:    true,
		Preflight: svc.Preflight,
		Init:      svc.Init,
		Health:    svc.Health,
		Close:     svc.Close,
	}
}
