// Package store is the notifier's durable outbox: one SQLite database
// (WAL, BEGIN IMMEDIATE and a busy timeout through pkg/sqlitex) holding
// every delivery from the moment notifier/notify accepts an event until it
// is sent or dead-lettered. Enqueues and replays commit with
// synchronous=FULL; attempt bookkeeping with NORMAL (see Store). All SQL
// of the plugin lives here.
//
// A delivery moves pending → inflight (claimed by one process with a
// random claim token, attempts+1) → sent | pending (retry later) | dead.
// Every move is one transaction, and result writes match the claim token,
// so two processes sharing the file never both own a row and a process
// that lost its claim (lease expired, row reclaimed) cannot overwrite the
// new owner's outcome. delivery_key is unique: notifying the same event
// twice inserts nothing the second time, even after it was sent.
package store
