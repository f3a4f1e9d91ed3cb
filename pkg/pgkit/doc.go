// Package pgkit is the PostgreSQL plumbing the PostgreSQL-backed plugins
// share, the sibling of sqlitex: a pool that dials lazily (a plugin's
// initialize must answer even while the database is down), one schema per
// plugin that becomes every connection's search_path, transactions that
// are retried as a whole on serialization failures, deadlocks and a
// connection lost before COMMIT was sent, numbered migrations that many
// processes on many hosts may start at the same moment, and classification
// of errors into "the database is unavailable" (JSON-RPC -32205, retriable)
// and everything else.
//
// A connection lost while COMMIT is in flight is the one case where the
// outcome cannot be known: Tx then returns an error wrapping
// ErrCommitUnknown and never retries, since running fn again could apply
// its effect twice.
//
// It uses github.com/jackc/pgx/v5 (pgxpool). SQL that belongs to one
// plugin stays in that plugin's store package; only the pattern lives
// here. Nothing here logs; a DSN may carry a password, which Password
// extracts so plugins can register it with their log redactor.
package pgkit
