// Package inbound receives Slack events over either transport and hands
// each event_callback to a Sink, with the connection state kept for
// health/check.
//
// Socket Mode (socket.go) runs slack-go's socketmode client: every
// envelope is acked first (Slack wants the ack within 3 s and redelivers
// otherwise), then its payload is delivered. slack-go reconnects by itself
// on `disconnect`, read errors and ping timeouts, with backoff; it only
// returns on a rejected app token, after which the runner marks itself
// unhealthy and waits minutes before trying again instead of spinning.
//
// The Events API (http.go) is a real HTTP listener: every request is
// verified with slack.NewSecretsVerifier (HMAC-SHA256 over the raw body,
// compared in constant time, timestamps within 5 minutes), bodies are
// capped, url_verification is answered, and an event gets its 200 before
// it is delivered, since Slack retries anything slower than 3 s.
//
// Deduplication is not done here: the Sink's owner claims each event in
// the persisted seen-set, which also absorbs Slack's retries.
package inbound
