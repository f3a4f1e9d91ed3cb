// Package inspect is the operator's view of a queue:
// `animus-queue-sqlite inspect --project DIR` prints the entries in queue
// order with their stats, and the audit trail of status transitions, as
// tables or (--json) as one JSON document. It reads one snapshot without
// the write lock, so it is safe to run beside a busy daemon; it writes only
// to migrate a file left by an older plugin version, as the plugin would.
package inspect
