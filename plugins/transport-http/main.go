// Command animus-transport-http is the Animus HTTP transport: a REST and
// Server-Sent Events gateway to the daemon's control socket, started by the
// daemon (`animus web serve`) as a transport_backend plugin.
package main

import (
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/transport-http/internal/transport"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	svc := transport.New(getenv)
	mux := pluginkit.NewMux()
	svc.Register(mux)
	return pluginkit.Plugin{
		Name:        "animus-transport-http",
		Kind:        "transport_backend",
		Description: "HTTP REST + SSE transport for Animus: exposes the daemon's control socket as /api/v1/* endpoints and event streams",
		Env:         transport.Env,
		Mux:         mux,
		// As the reference transport: capabilities.streaming mirrors
		// TransportSchema.supports_streaming (transport-http.md §5).
		Streaming: true,
		Init:      svc.Init,
		Health:    svc.Health,
		Close:     svc.Close,
	}
}
