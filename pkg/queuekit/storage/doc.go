// Package storage is the boundary between the queue's semantics (package
// queue) and the databases that keep it (sqlitestore, pgstore): the row
// types both sides speak and Store, the one interface a backend
// implements. It holds no SQL and no rules.
//
// The semantics are written once against Store; a backend only reads and
// writes rows inside the transactions Update and View open. Update must
// serialise every read-modify-write of one queue against every other
// writer of that queue, in any process on any host (SQLite: BEGIN
// IMMEDIATE; PostgreSQL: a transaction-scoped advisory lock on the
// namespace), because FIFO order and subject exclusivity are properties
// of the whole queue, not of a row.
package storage
