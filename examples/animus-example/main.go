// Command animus-example is a small plugin that proves pluginkit before any
// real plugin exists: an echo, a slow cancellable method with progress, a
// notification stream, and an error generator. The conformance runner and
// the benchmarks drive it as a built binary.
package main

import (
	"os"

	"github.com/animus-plugins/animus-plugins/examples/animus-example/internal/example"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	svc := example.New(getenv)
	mux := pluginkit.NewMux()
	svc.Register(mux)
	return pluginkit.Plugin{
		Name:        "animus-example",
		Kind:        "custom",
		Description: "pluginkit example plugin: echo, slow, stream and fail methods",
		Env:         example.Env,
		Mux:         mux,
		// Opt in to the conformance runner's scenarios that need a slow,
		// cancellable request (spec §8.6.1 $harness/ strings).
		ExtraCapabilities: []string{example.HarnessSlow},
		Streaming:         true,
		Progress:          true,
		Init:              svc.Init,
		Health:            svc.Health,
	}
}
