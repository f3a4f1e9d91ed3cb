// Command animus-trigger-slack is an Animus trigger backend for Slack: an
// "@animus please review" mention or a direct message to the bot becomes a
// trigger/event that starts a workflow. Events arrive over Socket Mode or
// the Events API, are deduplicated in a persisted seen-set, and carry the
// workflow trigger id the daemon routes on. Workflow phases answer back
// with slack/chat_post_message, slack/chat_post_ephemeral and slack/send_dm.
//
// All logic lives in internal/; this file only wires it to pluginkit.
package main

import (
	"os"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/trigger-slack/internal/trigger"
)

func main() { os.Exit(pluginkit.Main(newPlugin(os.Getenv))) }

// newPlugin builds the plugin, reading its environment through getenv; the
// golden tests build it the same way in process.
func newPlugin(getenv func(string) string) pluginkit.Plugin {
	svc := trigger.New(config.Load(getenv))
	mux := pluginkit.NewMux()
	svc.Register(mux)
	return pluginkit.Plugin{
		Name:        "animus-trigger-slack",
		Kind:        "trigger_backend",
		Description: "Slack trigger: app mentions and direct messages start workflows (Socket Mode or Events API); outbound chat methods",
		Env:         config.Env,
		Mux:         mux,
		// trigger/event notifications are a stream for the life of the
		// connection.
		Streaming: true,
		Init:      svc.Init,
		Health:    svc.Health,
		Close:     svc.Close,
	}
}
