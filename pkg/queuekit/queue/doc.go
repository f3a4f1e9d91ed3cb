// Package queue is the queue's semantics: what each queue/* method of
// animus-queue-protocol 0.3.2 does, following the reference plugins'
// behaviour table (shared/reference/queue.md §3) down to error codes and
// messages, and what each generation-fenced queue/v2/* method of 0.4.0
// does (shared/reference/queue-v2.md §3: v2_enqueue.go, v2_lease.go,
// v2_tickets.go, fence.go). It is written once, against storage.Store,
// and serves both animus-queue-sqlite (sqlitestore) and
// animus-queue-postgres (pgstore): the two binaries differ only in how
// they open their store.
// Both surfaces work on the same entries: an entry is ticketed once it has
// a subject generation, and old-style calls that would bypass its fence
// answer -32209.
//
// The daemon starts a fresh process for every queue call, so the Service
// is built for a short life: initialize only records the project binding
// (and touches nothing when there is none), the database is opened on the
// first domain call (Options.Open), and every read-modify-write is one
// storage.Store Update, so concurrent processes, on one host or many, see
// each call either whole or not at all.
package queue
