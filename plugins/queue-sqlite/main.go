// Command animus-queue-sqlite is an Animus queue plugin (queue protocol
// 0.4.0 with generation-fenced leases, on top of 0.3.2) that keeps each project's dispatch queue in one SQLite file, safe
// for the many short-lived processes the daemon, the CLI and the
// reconcilers run against it at once. Logic lives in internal/.
package main

import (
	"context"
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/queue"
	"github.com/animus-plugins/animus-plugins/plugins/queue-sqlite/internal/backend"
	"github.com/animus-plugins/animus-plugins/plugins/queue-sqlite/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/queue-sqlite/internal/inspect"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	// A bad value is reported by Preflight (serving) or by inspect, never
	// by --manifest, which must work with a scrubbed environment.
	cfg, cfgErr := config.FromEnv(getenv)
	svc := queue.New(queue.Options{Rules: cfg.Rules, Open: backend.Opener(cfg)})
	mux := pluginkit.NewMux()
	svc.Register(mux)
	return pluginkit.Plugin{
		Name:             "animus-queue-sqlite",
		Kind:             "queue",
		Description:      "SQLite dispatch queue: strict FIFO, deferred entries, atomic multi-process leases",
		Env:              config.Env,
		Mux:              mux,
		KindCapabilities: queue.KindCapabilities(),
		Preflight:        func(context.Context) error { return cfgErr },
		Init:             svc.Init,
		Health:           svc.Health,
		Close:            svc.Close,
		Commands: map[string]pluginkit.Command{
			"inspect": {
				Summary: "--project DIR [--db FILE] [--json] [--audit N] [--entry ID]: print the queue and its audit trail",
				Run: func(ctx context.Context, args []string) int {
					return inspect.Run(ctx, args, getenv, os.Stdout, os.Stderr)
				},
			},
		},
	}
}
