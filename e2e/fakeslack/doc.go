// Package fakeslack is a local Slack for tests, benchmarks and the demo:
// the Web API methods the Slack trigger plugin calls and a Socket Mode
// websocket, on 127.0.0.1, built on slack-go's slacktest server with custom
// handlers.
//
// It follows Slack's documented behaviour where the plugin can see it:
//
//   - apps.connections.open takes the app-level token as a Bearer header
//     and answers {"ok":true,"url":"ws://127.0.0.1:<port>/link/?ticket=…"};
//     a bot token gets not_allowed_token_type, a wrong one invalid_auth, none
//     not_authed (or SetOpenError forces an error);
//   - the websocket greets with {"type":"hello",…} (a connection counts,
//     for WaitConnections, once hello is out), sends PINGs every
//     PingInterval, delivers events_api envelopes ({envelope_id, type,
//     accepts_response_payload, retry_attempt, retry_reason, payload}),
//     records acks ({envelope_id}) in order, repeats included (Acks,
//     WaitAcks), with their latency, and can send {"type":"disconnect",…}
//     or drop the connection;
//   - auth.test, chat.postMessage, chat.postEphemeral and conversations.open
//     check the bot token (header or form) and answer with Slack's shapes,
//     ok:false error codes (channel_not_found, no_text, user_not_found, …),
//     and, on request (FailNext for the next calls, SetFailure until
//     cleared), another error code, 429 with Retry-After, 5xx with an HTML
//     body, or a verbatim body for answers slack-go cannot decode; every
//     call is recorded (Calls) with its form, Authorization and
//     Content-Type, and the status and body the fake answered;
//   - with EchoBotMessages, a message the bot posts into a DM comes back as
//     a message.im event from the bot's own user, as Slack sends it, so loop
//     protection can be tested for real.
//
// Start returns a Server without a testing.T (the demo uses it); New ties
// one to a test. Envelope builders (Mention, DirectMessage, Callback,
// EventsAPI) and Sign (Events API request signatures) complete it.
//
// It is a module of its own that imports nothing from the e2e module, so
// the plugin's unit tests use this one fake Slack too.
package fakeslack
