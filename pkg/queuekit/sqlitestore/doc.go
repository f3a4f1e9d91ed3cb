// Package sqlitestore is the SQLite storage.Store: the only place the
// SQLite queue speaks SQL. It keeps one project's
// queue in one SQLite file that many plugin processes open at once (the
// daemon starts a fresh process for every queue call while the CLI and the
// reconcilers run their own): WAL, synchronous=FULL, a busy timeout, and
// BEGIN IMMEDIATE for every read-modify-write, through pkg/sqlitex.
//
// The package offers data access, not queue rules: Update runs a callback
// in one write transaction with a Store bound to it whose methods read and
// change rows; View runs a callback in one read snapshot. The queue
// package decides what to read and write; everything it decides commits
// or rolls back as one.
//
// Every statement on the enqueue, lease and completion paths is an index
// range search (plan_test.go holds them to it) and per-state counts are
// kept by triggers, so latency does not grow with the depth of the queue.
//
// Schema 2 adds the generation-fenced tickets (schema_v2.go): ticket
// columns on entries and the tables that keep finished ticketed entries,
// subject generation counters and idempotency bindings forever
// (tickets.go).
//
// Opening is built for a cold start per call: the schema version is read
// first, and the migration transaction (which takes the write lock) runs
// only when the file is new or older than this binary.
package sqlitestore
