// Package pgstore is the PostgreSQL storage.Store: the only place the
// PostgreSQL queue speaks SQL. Several queues share one database, each in
// its own schema (its namespace; pgkit sets search_path), and any number
// of plugin processes on any number of hosts open the same namespace. It
// behaves exactly like sqlitestore: the same rows, the same order, the
// same answers, so the queue package's semantic tests pass on both.
//
// # Transactions
//
// Update is pgkit.Tx(ReadWrite): READ COMMITTED. Its first statements,
// in one round trip, are SET LOCAL lock_timeout and
// pg_advisory_xact_lock(class, hashtext(current_schema())): every writer
// of one namespace is serialised, as BEGIN IMMEDIATE serialises SQLite's.
// Row locks alone cannot do it: strict FIFO, one live lease per subject
// and per reservation collision key, "max+1" ordinals and generation
// counters are properties of the whole queue (of rows that do not exist
// yet, or of the absence of rows), which no row lock and no READ
// COMMITTED snapshot protects; SERIALIZABLE would, at the price of
// aborting and retrying most concurrent leases. The lock is taken before
// the first read, and READ COMMITTED takes a fresh snapshot per
// statement, so everything fn reads was committed by the writers before
// it (REPEATABLE READ would have taken its snapshot while waiting for the
// lock). The candidate reads (V2Candidates, Leasable) also say FOR UPDATE
// SKIP LOCKED: redundant under the namespace lock, but it keeps a lease
// from ever waiting on or double-taking a row should a writer ever run
// without the lock (an operator's manual UPDATE, a future path).
//
// A wait past LockTimeout (SQLSTATE 55P03) and an unreachable database
// come back as *storage.UnavailableError (the host's -32205, retriable);
// the Reason never carries the DSN. Errors fn returns pass through
// unchanged.
//
// View is pgkit.Tx(ReadOnly): REPEATABLE READ READ ONLY, one snapshot for
// all of fn, neither waiting for writers nor blocking them (like WAL
// readers).
//
// # Retries and lost commits
//
// pgkit.Tx runs fn again, in a new transaction, after a serialization
// failure, a deadlock, or a connection lost before COMMIT was sent: none
// of these committed anything, and fn only reads and writes through the
// transaction, so running it again is safe. If the connection is lost
// while COMMIT is in flight, the outcome is unknown: pgkit does not retry
// (ErrCommitUnknown) and Update reports it as unavailable. A caller that
// retries must be ready for the first attempt to have committed: a v2
// enqueue with an idempotency key replays; an enqueue without one may be
// added twice; a lease may have handed entries out that the daemon never
// heard of: they stay assigned to the owner and workflow id of the lost
// request until that fence is recovered after expiry
// (queue/v2/lease/recover) or the entry is dropped, as for any lost reply
// (queue-v2.md §6.9).
//
// # Schema
//
// schema.go holds SQLite schema 2 in one migration, with the same columns
// plus project_root (informational). Timestamps are the wire text plus
// bigint nanoseconds, dispatch is the canonical JSON as text (never
// jsonb), per-state counts are kept by a plpgsql trigger in the same
// transaction, and every hot statement is an index range scan
// (plan_test.go checks the plans with EXPLAIN on an analysed namespace).
// Import copies a SQLite queue (sqlitestore.Export) into an empty
// namespace.
//
// Differences from SQLite, by nature: text cannot hold a NUL character
// (a subject key or id containing U+0000 is refused by the server, where
// SQLite stores it), and ties that SQLite breaks by rowid (the sweep's
// audit order among entries expiring at the same nanosecond, the
// collision lookup among entries assigned at the same nanosecond) are
// broken by ordinal or left to the planner.
package pgstore
