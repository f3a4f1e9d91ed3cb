// Package slackapi is the plugin's Slack Web API side, on slack-go: the
// client every other part shares (API base, tokens, an HTTP client that
// keeps each response's raw body, logs on stderr), the bot identity check
// (auth.test), and the outbound methods workflow phases call
// (slack/chat_post_message, slack/chat_post_ephemeral, slack/send_dm).
//
// Outbound methods keep the reference plugin's params, validation and error
// categories: the result is Slack's whole JSON response, and failures are
// -32603 with data.category slack_error (ok:false), http (non-2xx, 429
// included), transport, decode or missing_token; bad params are -32602
// invalid_request. slack-go parses responses into structs and drops the
// body, so a RoundTripper captures it per call; that is also how an error
// carries Slack's body in data.body. A rate limit (429) is retried once
// after Retry-After when that wait is short; otherwise it is reported.
package slackapi
