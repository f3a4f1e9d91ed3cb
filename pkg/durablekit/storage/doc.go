// Package storage is the boundary between the durable step log's rules
// (package steplog) and the databases that keep it (sqlitestore and
// pgstore): the rows both sides speak and Store, the one
// interface a backend implements. It holds no SQL and no rules.
//
// Update must serialise every read-modify-write of one step log against
// every other writer, in any process (SQLite: BEGIN IMMEDIATE), because
// "exactly one new reservation per idempotency key" and the epoch and
// commit counters are properties of the whole log, not of a row.
package storage
