package config

import "github.com/animus-plugins/animus-plugins/pkg/pluginkit"

// The environment variables the plugin reads. The daemon clears the
// environment and forwards only declared names, so every one is in Env.
const (
	EnvAppToken         = "SLACK_APP_TOKEN"
	EnvBotToken         = "SLACK_BOT_TOKEN"
	EnvSigningSecret    = "SLACK_SIGNING_SECRET"
	EnvFilterChannels   = "SLACK_FILTER_CHANNELS"
	EnvAPIBase          = "SLACK_API_BASE"
	EnvTriggerID        = "SLACK_TRIGGER_ID"
	EnvTriggerIDMention = "SLACK_TRIGGER_ID_MENTION"
	EnvTriggerIDDM      = "SLACK_TRIGGER_ID_DM"
	EnvMode             = "SLACK_MODE"
	EnvEventsAddr       = "SLACK_EVENTS_ADDR"
	EnvEventsPath       = "SLACK_EVENTS_PATH"
	EnvStateDir         = "SLACK_STATE_DIR"
	EnvIgnoreBots       = "SLACK_IGNORE_BOTS"
)

// Env is the manifest's env_required. Tokens and the signing secret are
// sensitive: pluginkit redacts their values from logs and error messages.
var Env = []pluginkit.EnvVar{
	{Name: EnvAppToken, Sensitive: true, Required: true,
		Description: "Socket Mode app-level token xapp-… (scope connections:write); socket mode only"},
	{Name: EnvBotToken, Sensitive: true, Required: true,
		Description: "bot token xoxb-… (app_mentions:read, im:history, chat:write); identity check and outbound methods"},
	{Name: EnvSigningSecret, Sensitive: true,
		Description: "signing secret that verifies Events API requests; http mode only"},
	{Name: EnvFilterChannels,
		Description: "comma-separated channel ids allowed to trigger (D… ids for DMs); empty = all"},
	{Name: EnvAPIBase,
		Description: "Slack Web API base URL (default https://slack.com/api)"},
	{Name: EnvTriggerID, Required: true,
		Description: "id of the workflow trigger stamped on every event as trigger_id"},
	{Name: EnvTriggerIDMention,
		Description: "trigger_id for slack.mention events (default SLACK_TRIGGER_ID)"},
	{Name: EnvTriggerIDDM,
		Description: "trigger_id for slack.dm events (default SLACK_TRIGGER_ID)"},
	{Name: EnvMode,
		Description: "inbound transport: socket (default, Socket Mode) or http (Events API)"},
	{Name: EnvEventsAddr,
		Description: "http mode listen address (default 127.0.0.1:3000)"},
	{Name: EnvEventsPath,
		Description: "http mode request path (default /slack/events)"},
	{Name: EnvStateDir,
		Description: "directory of the dedup store (default <project>/.animus/trigger-slack)"},
	{Name: EnvIgnoreBots,
		Description: "drop messages from bots (default true); the bot's own messages are always dropped"},
}
