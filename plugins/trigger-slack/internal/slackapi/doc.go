// Package slackapi is the plugin's Slack Web API side: the client every
// other part shares (API base, tokens, the slack-go client Socket Mode
// runs on, logs on stderr), the bot identity check (auth.test), and the
// outbound methods workflow phases call (slack/chat_post_message,
// slack/chat_post_ephemeral, slack/send_dm).
//
// Outbound methods keep the reference plugin's params, validation and error
// categories: the result is Slack's whole JSON response, and failures are
// -32603 with data.category slack_error (ok:false), http (non-2xx, 429
// included), transport, decode or missing_token; bad params are -32602
// invalid_request. Web API calls are sent as slack-go sends them, but the
// answer is decoded leniently (webapi.go): only ok, error and the few
// fields a call needs are read, so a successful post is never reported as
// a failure because slack-go cannot decode some other part of the answer.
// A rate limit (429) is retried once after Retry-After when that wait is
// short; otherwise it is reported.
package slackapi
