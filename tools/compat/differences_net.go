package compat

// The network plugins' differences from their references:
// animus-notifier-http v0.1.0, animus-trigger-slack v0.2.0,
// animus-log-storage-s3 (the log-storage reference; there is no Rust Loki
// plugin) and animus-transport-http v0.2.1.

func notifierDifferences() []Difference {
	const p = "notifier-webhook"
	return []Difference{
		{p, SourceREADME, "| outbox |",
			"the outbox is SQLite (WAL, one transaction per change, `synchronous=FULL` on enqueue); the reference rewrites a JSONL file with no locking or fsync",
			"a crash or a second process could lose or corrupt the reference's outbox (notifier-webhook.md §3.7, §4.5)"},
		{p, SourceREADME, "| dedup |",
			"deliveries are deduplicated for 7 days after sending, not only while queued",
			"a daemon replay after the outbox drained would otherwise deliver twice (notifier-webhook.md §4.3)"},
		{p, SourceREADME, "| `flush {}` after a restart |",
			"`flush {}` after a restart drains every project in the outbox; the reference does nothing until the next notify",
			"the daemon's tick flushes without a project, so pending deliveries would wait indefinitely (notifier-webhook.md §4.6)"},
		{p, SourceREADME, "| delivery id |",
			"the delivery id is a UUIDv5 of the delivery key, stable across crashes; the reference's is a random UUIDv4",
			"receivers deduplicate by id, which a new id per resend defeats (notifier-webhook.md §4.3)"},
		{p, SourceREADME, "| signing, idempotency |",
			"deliveries can be signed (Standard Webhooks, GitHub, Stripe) and carry `Idempotency-Key` and an attempt header; the reference has neither",
			"receivers must authenticate the sender and recognise retries (notifier-webhook.md §4.2, §4.3)"},
		{p, SourceREADME, "| backoff |",
			"backoff has full jitter and honours `Retry-After` (capped); the reference's is unjittered and ignores it",
			"jitter avoids synchronised retry storms, and `Retry-After` is the receiver's own request (notifier-webhook.md §4.4)"},
		{p, SourceREADME, "| sends per flush |",
			"a flush sends up to `max_concurrency` per connector within a 10 s budget; the reference sends one at a time",
			"one slow receiver must not stall the daemon's flush tick"},
		{p, SourceREADME, "| loops |",
			"lifecycle events are forwarded only with an explicit pattern, quietly, besides the same-connector guard",
			"delivery lifecycle events fed back into notifiers can loop across connectors (notifier-webhook.md §3.9)"},
		{p, SourceREADME, "| disabled connector |",
			"a disabled connector gets nothing enqueued (its pending rows are dead-lettered); the reference enqueues and then dead-letters",
			"enqueueing for a disabled connector only manufactures dead letters"},
		{p, SourceREADME, "| `env_required` |",
			"four variables are declared in `env_required` (the reference declares none); `*_env` forwarding works as before",
			"the daemon clears the environment and forwards only declared names (host-and-lifecycle.md §5)"},
		{p, SourceREADME, "| dead letters |",
			"dead letters are listed and replayed by the `deadletters` command and `notifier/*dead_letters` methods; the reference writes a file",
			"operators need to see and replay failures without editing files"},
	}
}

func triggerDifferences() []Difference {
	const p = "trigger-slack"
	return []Difference{
		{p, SourceREADME, "Events are **flat** `TriggerEvent`s",
			"events are flat `TriggerEvent`s with a `trigger_id`; the reference emits the nested `{id, event}` shape without one",
			"the daemon decodes `params` straight into `TriggerEvent`, drops the nested shape and routes by `trigger_id` (spec §7.3 wire shape note; trigger-slack.md §2)"},
		{p, SourceREADME, "The team in `event_id` comes from the outer `team_id`",
			"the team in `event_id` comes from the outer `team_id`, and an event with neither `ts` nor `event_ts` is dropped",
			"the reference's ids often read `slack:unknown/…` or collide on `…/0`, which breaks dedup (trigger-slack.md §3.6)"},
		{p, SourceREADME, "`supports_dedup: true`",
			"the schema says `supports_dedup: true` and `supports_resume: false`",
			"dedup is real (a persisted seen-set) and no resume cursor is kept; the reference claims resume without one"},
		{p, SourceREADME, "`trigger/ack` notifications are never answered",
			"`trigger/ack` notifications are never answered, requests get `{event_id, acked: true}`, and the status is stored",
			"the daemon sends ack as a notification, and answering one breaks the protocol (spec §2.2; trigger-slack.md §1.3)"},
		{p, SourceREADME, "The Events API transport",
			"the Events API transport, the signing-secret check, bot filtering, health reflecting the connection and one bounded 429 retry are new",
			"deployments without Socket Mode need HTTP events, which only the signing secret authenticates; the bot's own messages must not trigger it"},
		{p, SourceREADME, "`slack/chat_post_ephemeral` does not require the `text` key",
			"`slack/chat_post_ephemeral` accepts `blocks` without `text`",
			"Slack accepts either"},
		{p, SourceREADME, "Outbound results are Slack's raw response",
			"outbound results are Slack's raw response, as in the reference, but sent form-encoded by slack-go",
			"kept for workflows written against the reference; Slack accepts both encodings"},
		{p, "trigger-slack.md §3.6", "`exit` not handled",
			"`exit`, stdin EOF and SIGTERM end the process within the daemon's wait; the reference does not handle `exit`",
			"the daemon's shutdown ladder kills a plugin that is still running 2 s after `exit` (host-and-lifecycle.md §8)"},
	}
}

// lokiDifferences: there is no Rust Loki plugin; the log-storage reference
// is animus-log-storage-s3 (logs-loki.md §4).
func lokiDifferences() []Difference {
	const p = "logs-loki"
	return []Difference{
		{p, SourceREADME, "| Storage |",
			"entries live in Loki streams, each entry the JSON log line; the S3 reference writes one object per entry",
			"Loki is the backend operators already run for logs; the JSON line makes the round trip lossless (logs-loki.md §6.2)"},
		{p, SourceREADME, "| Filtering |",
			"filters run in Loki as LogQL and are checked again in Go; the S3 reference filters in process after listing",
			"listing a whole bucket per query does not scale; the Go re-check keeps results exact where LogQL is coarser (logs-loki.md §6.6)"},
		{p, SourceREADME, "| Cursors |",
			"keyset cursors, exact across same-timestamp ties; the S3 reference has no cursor",
			"without one a caller cannot page past `limit`, and a timestamp-only cursor would repeat or lose tied entries (logs-loki.md §6.7)"},
		{p, SourceREADME, "| Tail |",
			"`follow:true` really follows (websocket or polling); the S3 reference runs one finite query even then",
			"spec §7.4: with `follow` the stream stays open and emits entries as they arrive"},
		{p, SourceREADME, "| Window |",
			"`max_query_window` is advertised and enforced; the S3 reference advertises none",
			"Loki refuses queries longer than its `max_query_length` (HTTP 400), so the limit must be known and applied (logs-loki.md §6.6)"},
		{p, SourceREADME, "| Fresh writes |",
			"a read-your-writes buffer merges recent stores into query and tail results",
			"Loki's ingestion can lag, and conformance queries right after storing, within 3 s (logs-loki.md §0, §6.9)"},
		{p, SourceREADME, "| Bad entries in storage |",
			"lines that are not a LogEntry are rebuilt into valid entries; the S3 reference skips undecodable objects",
			"other writers share the streams, and one undecodable entry makes the daemon discard the whole batch (logs-loki.md §0)"},
	}
}

func transportDifferences() []Difference {
	const p = "transport-http"
	return []Difference{
		{p, SourceREADME, "No auth; `config` ignored",
			"bearer tokens, actors, exact-match CORS, a Host guard, and loopback-only binding without a token; the reference has no auth and ignores `config`",
			"an open control surface on a network port lets anyone drive the daemon (transport-http.md §6)"},
		{p, SourceREADME, "Prefix-match CORS",
			"CORS origins match exactly; the reference's prefix match lets `http://localhost.evil.com` through",
			"a prefix match is a cross-origin hole"},
		{p, SourceREADME, "Every daemon error is 502",
			"the HTTP status follows the daemon's `data.category`; 502 only for a dropped connection or broken reply",
			"clients must tell bad input and missing objects from gateway failures (transport-http.md §1.6)"},
		{p, SourceREADME, "Connects, then validates",
			"input is validated before the daemon is contacted",
			"bad input is the client's error whether or not the daemon is up"},
		{p, SourceREADME, "A new socket per HTTP request",
			"a persistent connection pool with a per-call deadline (504)",
			"a socket per request costs a connect per call, and with no timeout a hung daemon hangs every client"},
		{p, SourceREADME, "No SSE, although",
			"four SSE routes with `id:`, `Last-Event-ID` resume, keep-alives and `event: end`",
			"the reference advertises `supports_streaming: true` without serving a stream (spec §13.3)"},
		{p, SourceREADME, "`GET /daemon/logs` always 502",
			"`GET /daemon/logs` answers a JSON array of the batch, or SSE with `follow=true`",
			"the reference decodes the stream as an array and always fails"},
		{p, SourceREADME, "No `subject/*`",
			"`subject/*`, `workflow/execute`, cancel `reason`, `/healthz` and OpenAPI are served",
			"the control protocol has them (transport-http.md §1.3) and HTTP clients need them"},
		{p, SourceREADME, "`transport/shutdown` aborts",
			"`transport/shutdown` drains and frees the port before replying; a second start is refused",
			"spec §13.4 asks for a graceful drain that releases the address; the reference leaks its listener on a second start"},
		{p, SourceREADME, "`agent/*` answers 502",
			"`agent/*` answers 501 (not supported)",
			"it is not a gateway failure; the daemon does not serve them on this surface"},
		{p, SourceREADME, "Axum's plain-text 415/422/400",
			"bad bodies get the JSON envelope: 415 `unsupported_media_type` or 400 `invalid_input` naming the field",
			"clients parse every failure the same way"},
		{p, SourceREADME, "Axum's empty 404 and 405",
			"unknown routes and methods get the envelope: 404 `route_not_found`, 405 `method_not_allowed` with `Allow`",
			"clients parse every failure the same way"},
		{p, SourceREADME, "`kinds: [\"http\",\"rest\"]`",
			"`transport/schema` lists `kinds: [\"http\",\"rest\",\"sse\"]`",
			"spec §13.3 asks for every protocol kind the transport exposes"},
	}
}
