// Package logstore is the log_storage_backend service: log_storage/store,
// query, tail and schema, and health/check, over a Loki reached through
// package loki.
//
// Each LogEntry becomes one Loki entry: stream labels service_name,
// source, level (plus static extra labels); structured metadata
// animus_id, target, source_name; the whole entry as a compact JSON line
// (lossless round trip, including nested fields); the entry's own
// timestamp to the nanosecond. Queries are translated to LogQL by package
// logql and evaluated by Loki; results are decoded from the line, checked
// against the filter again in Go, merged with a read-your-writes buffer of
// recently stored entries, deduplicated by id and sorted by (ts, id).
package logstore
