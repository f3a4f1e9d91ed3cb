// Package pgstore is the PostgreSQL storage.Store of the durable step log:
// the only place the PostgreSQL durable store speaks SQL. Several step logs
// share one database, each in its own schema (its namespace; pgkit sets
// search_path), and any number of plugin processes on any number of hosts
// open the same namespace. It behaves exactly like sqlitestore: the same
// rows, the same order, the same answers, so the semantic tests of
// packages steplog and durable pass on both
// (ANIMUS_DURABLE_TEST_BACKEND=postgres).
//
// # Transactions
//
// Update is pgkit.Tx(ReadWrite): READ COMMITTED. Its first statements, in
// one round trip, are SET LOCAL lock_timeout and
// pg_advisory_xact_lock(class, hashtext(current_schema())), class being
// "DURA" (0x44555241, not the queue's): every writer of one namespace is
// serialised, as BEGIN IMMEDIATE serialises SQLite's. Row locks alone
// cannot do it: "exactly one new reservation per idempotency key" is a
// property of the absence of a row, which no row lock protects, and the
// epoch and commit counters must grow in commit order. The lock is taken
// before the first read, and READ COMMITTED takes a fresh snapshot per
// statement, so everything fn reads was committed by the writers before
// it (REPEATABLE READ would have taken its snapshot while waiting for the
// lock). The partial unique index steps_active_key stays the backstop: two
// live-or-committed rows for one key cannot exist even if a writer ever
// ran without the lock.
//
// Epochs and commit sequence numbers are allocated by the database, from
// the one-row table meta, updated under the namespace lock: they are
// never reused (an allocation rolls back with the transaction that made
// it, and a committed one is never handed out again) and grow in commit
// order, across processes and restarts.
//
// View is pgkit.Tx(ReadOnly): REPEATABLE READ READ ONLY, one snapshot for
// all of fn (query_run, recover_in_flight), neither waiting for writers
// nor blocking them, like WAL readers. Outside Update and View each
// statement is its own transaction, as SQLite's autocommit.
//
// Database failures come back as *storage.BackendError: Busy (retriable)
// for a wait past LockTimeout (SQLSTATE 55P03) and whenever
// pgkit.IsUnavailable holds (a refused or timed-out connection, a server
// shutting down, an attempt past pgkit's OpTimeout, a lost COMMIT). Errors
// fn returns (the log's own, a method's BackendError) pass through
// unchanged. No error carries the DSN's password: pgkit never puts it in
// one.
//
// # Retries and lost commits
//
// pgkit.Tx runs fn again, in a new transaction, after a serialization
// failure, a deadlock, or a connection lost before COMMIT was sent: none
// of these committed anything, and fn only reads and writes through the
// transaction, so running it again is safe (storage.Store's contract). If
// the connection is lost while COMMIT is in flight, the outcome is
// unknown: pgkit does not retry (pgkit.ErrCommitUnknown) and Update
// reports a Busy BackendError. The caller may retry, because every durable
// operation is safe to repeat after a lost answer:
//
//   - commit_step: a step that did commit acknowledges again (ack true,
//     nothing changes), one that did not commits now;
//   - begin_step: the reservation made by the lost attempt answers
//     in_progress to the same key (its holder's step id is in
//     recover_in_flight), or the committed result if it was committed;
//   - begin_workflow_run: a run registered twice gets a second, higher
//     epoch and keeps its steps and first inputs; an epoch is never reused;
//   - abandon_step: ack false if the lost attempt released it.
//
// # Schema
//
// schema.go holds sqlitestore's schema in one migration: meta (the
// counters), runs and steps with the same columns, CHECKs and foreign key.
// Times are bigint UTC nanoseconds, JSON values are text holding the
// compact JSON verbatim (never jsonb), NULL meaning absent. The partial
// unique index steps_active_key (idempotency_key WHERE state IN
// ('reserved', 'committed')) is the exactly-once backstop; the partial
// indexes steps_commits and steps_reserved keep query_run on a run's
// commits and recover_in_flight on the reserved rows only, however many
// committed steps the namespace holds (plan_test.go checks the plans with
// EXPLAIN on an analysed namespace). Import copies a SQLite step log
// (sqlitestore.Export) into an empty namespace.
//
// Differences from SQLite, by nature: text cannot hold a NUL character (a
// run, phase, step name, key or abandon reason containing U+0000 is
// refused by the server as a non-busy BackendError, where SQLite stores
// it), and step_id ties in recover_in_flight's order are broken in byte
// order explicitly (COLLATE "C") rather than by SQLite's default BINARY
// collation: the same order.
package pgstore
