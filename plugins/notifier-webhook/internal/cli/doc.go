// Package cli holds the operator command-line modes of
// animus-notifier-webhook, which work on a project's outbox directly (the
// plugin may be running; every change is one BEGIN IMMEDIATE transaction):
//
//	animus-notifier-webhook deadletters --project DIR [--db PATH] [--replay ID ...|--all] [--json]
//	animus-notifier-webhook backfill    --project DIR [--db PATH] < events.jsonl
//
// deadletters lists dead letters, or makes the chosen ones pending again
// (they go out on the plugin's next flush, with their original
// delivery_id). backfill enqueues daemon event records read as JSON lines,
// for example from events.jsonl after an outage; events already in the
// outbox are skipped, so running it twice sends nothing twice.
package cli
