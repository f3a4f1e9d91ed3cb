// Command animus-notifier-webhook is an Animus notifier plugin: it
// forwards the daemon events operators subscribe to into webhooks and Slack
// incoming webhooks through a durable SQLite outbox, with signed requests,
// idempotency keys, retries with backoff, and dead letters operators can
// replay. The logic lives in internal/; see internal/notifier/doc.go.
package main

import (
	"context"
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/cli"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/notifier-webhook/internal/notifier"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	svc := notifier.New(notifier.Options{Getenv: getenv})
	mux := pluginkit.NewMux()
	svc.Register(mux)
	env := cli.DefaultEnv()
	return pluginkit.Plugin{
		Name:        "animus-notifier-webhook",
		Kind:        "notifier",
		Description: "Delivers daemon events to webhooks and Slack through a durable SQLite outbox: signed, idempotent, retried, dead-lettered",
		Env:         config.EnvVars,
		Mux:         mux,
		Preflight:   config.Preflight,
		Init:        svc.Init,
		Health:      svc.Health,
		Close:       svc.Close,
		Commands: map[string]pluginkit.Command{
			"deadletters": {
				Summary: "--project DIR [--db PATH] [--replay ID ...|--all] [--json]   list or replay dead letters",
				Run:     func(ctx context.Context, args []string) int { return cli.DeadLetters(ctx, env, args) },
			},
			"backfill": {
				Summary: "--project DIR [--db PATH] < events.jsonl   enqueue daemon events read as JSON lines",
				Run:     func(ctx context.Context, args []string) int { return cli.Backfill(ctx, env, args) },
			},
		},
	}
}
