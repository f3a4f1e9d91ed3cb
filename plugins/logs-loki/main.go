// Command animus-logs-loki is an Animus log-storage backend that stores
// every daemon, plugin and workflow log entry in Grafana Loki (or Grafana
// Cloud Logs) and reads them back through log_storage/query and
// log_storage/tail.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/logstore"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	// A malformed value still yields a best-effort Config so --manifest
	// works whatever the environment; serving then fails in Preflight.
	// A missing LOKI_URL is not malformed: the plugin runs, unhealthy,
	// and names what is missing on every call.
	cfg, cfgErr := config.Load(getenv)
	svc := logstore.New(cfg)
	mux := pluginkit.NewMux()
	svc.Register(mux)
	return pluginkit.Plugin{
		Name:        "animus-logs-loki",
		Kind:        "log_storage_backend",
		Description: "Stores Animus daemon, plugin and workflow logs in Grafana Loki and reads them back (query, tail)",
		Env:         config.Env,
		Mux:         mux,
		Streaming:   true,
		Preflight: func(context.Context) error {
			if cfgErr != nil {
				return fmt.Errorf("invalid configuration: %w", cfgErr)
			}
			return nil
		},
		Init:   svc.Init,
		Health: svc.Health,
	}
}
