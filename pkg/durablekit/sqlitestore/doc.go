// Package sqlitestore is the SQLite storage.Store of the durable step log:
// the schema and every statement that reads or writes it. It knows
// nothing of the rules (package steplog) or of JSON-RPC (package durable).
//
// Exactly-once rests on four properties held here and in steplog:
//
//   - every read-modify-write (begin_step's lookup and insert, commit,
//     abandon, epoch allocation) runs in one BEGIN IMMEDIATE transaction
//     (Update), so
//     two processes on one file can never both see "no reservation" for a
//     key;
//   - a partial unique index allows at most one reserved-or-committed row per
//     idempotency key, so even a logic error cannot commit a key twice;
//   - the epoch and commit-sequence counters live in the database (table
//     meta) and only grow, so a restarted process continues from where the
//     file left off, never from 0;
//   - the database is opened with WAL and synchronous=FULL, so a commit that
//     was acknowledged survives a process kill and a power cut.
//
// Reads that the wire needs as one consistent picture (query_run,
// recover_in_flight) are single SELECT statements: SQLite runs each in one
// read snapshot without taking the write lock.
package sqlitestore
