// Command animus-durable-postgres is an Animus durable_store plugin that
// keeps the reservation-fenced step log in PostgreSQL, so a workflow begun
// on one host can be recovered on another. It answers exactly as
// animus-durable-sqlite does: both serve pkg/durablekit's rules over
// their own store. Logic lives in internal/ and pkg/durablekit.
package main

import (
	"context"
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/durable"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/durable-postgres/internal/backend"
	"github.com/animus-plugins/animus-plugins/plugins/durable-postgres/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/durable-postgres/internal/importer"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	// A bad or missing setting is reported by Preflight (serving) or by
	// import, never by --manifest. Nothing here dials, and the store opens
	// on the first domain call (Lazy): initialize must not wait for the
	// database.
	cfg, cfgErr := config.Load(getenv)
	svc := durable.New(durable.Options{Rules: cfg.Rules, Open: backend.Opener(cfg), Lazy: true})
	mux := pluginkit.NewMux()
	svc.Register(mux)
	return pluginkit.Plugin{
		Name:        backend.Name,
		Kind:        "durable_store",
		Description: "PostgreSQL durable step store shared by daemons on several machines: reservation-fenced, crash-proof exactly-once steps",
		Env:         config.Env,
		// The DSN is redacted whole as a sensitive variable; its password
		// alone too (a driver error may quote it without the rest).
		Secrets:          []string{pgkit.Password(cfg.DSN)},
		Mux:              mux,
		KindCapabilities: svc.KindCapabilities(),
		// One request at a time, in arrival order, as animus-durable-sqlite.
		Serial:    true,
		Preflight: func(context.Context) error { return cfg.Check(backend.Name, cfgErr) },
		Init:      svc.Init,
		Health:    svc.Health,
		Close:     svc.Close,
		Commands: map[string]pluginkit.Command{
			"import": {
				Summary: "--from-sqlite FILE: copy an animus-durable-sqlite database into the namespace (which must be empty), in one transaction",
				Run: func(ctx context.Context, args []string) int {
					return importer.Run(ctx, args, getenv, os.Stdout, os.Stderr)
				},
			},
		},
	}
}
