// Command animus-queue-postgres is an Animus queue plugin (queue protocol
// 0.4.0 with generation-fenced leases, on top of 0.3.2) that keeps the
// dispatch queue in PostgreSQL, so daemons on several machines share one
// body of work. It answers exactly as animus-queue-sqlite does: both
// serve pkg/queuekit/queue's semantics over their own store. Logic lives
// in internal/ and pkg/queuekit.
package main

import (
	"context"
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/queue"
	"github.com/animus-plugins/animus-plugins/plugins/queue-postgres/internal/backend"
	"github.com/animus-plugins/animus-plugins/plugins/queue-postgres/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/queue-postgres/internal/importer"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	// A bad or missing setting is reported by Preflight (serving) or by
	// import, never by --manifest, which must work with a scrubbed
	// environment. Nothing here dials: initialize must not wait for the
	// database (the daemon starts a process per queue call).
	cfg, cfgErr := config.FromEnv(getenv)
	svc := queue.New(queue.Options{Rules: cfg.Rules, Open: backend.Opener(cfg)})
	mux := pluginkit.NewMux()
	svc.Register(mux)
	return pluginkit.Plugin{
		Name:        backend.Name,
		Kind:        "queue",
		Description: "PostgreSQL dispatch queue shared by daemons on several machines: strict FIFO, generation-fenced leases, SKIP LOCKED hand-out",
		Env:         config.Env,
		// The DSN is redacted whole as a sensitive variable; its password
		// alone too (a driver error may quote it without the rest).
		Secrets:          []string{pgkit.Password(cfg.DSN)},
		Mux:              mux,
		KindCapabilities: queue.KindCapabilities(),
		Preflight:        func(context.Context) error { return cfg.Check(backend.Name, cfgErr) },
		Init:             svc.Init,
		Health:           svc.Health,
		Close:            svc.Close,
		Commands: map[string]pluginkit.Command{
			"import": {
				Summary: "--from-sqlite FILE: copy an animus-queue-sqlite database into the namespace (which must be empty), in one transaction",
				Run: func(ctx context.Context, args []string) int {
					return importer.Run(ctx, args, getenv, os.Stdout, os.Stderr)
				},
			},
		},
	}
}
