// Package pgstore keeps subjects in one PostgreSQL schema (a namespace)
// that daemons, CLIs and dashboards on several machines share. It is the
// second storage.Store beside sqlitestore and answers exactly as it does.
//
// Writers: every mutation is one READ COMMITTED transaction whose first
// round trip takes pg_advisory_xact_lock('SUBJ', hashtext(schema)) under
// lock_timeout, the PostgreSQL counterpart of SQLite's BEGIN IMMEDIATE.
// Under that lock the transaction reads the row, writes the new state, its
// label rows, any comment, and one subject_events row whose seq comes from
// a counter in meta. Because the lock is released only after the commit is
// visible, seqs are contiguous (a rolled-back transaction gives its seq
// back) and in commit order on every host: the change log is the record.
//
// Watches: the same transaction sends pg_notify('animus_subjects',
// <schema>); NOTIFY is delivered at commit, in commit order. Follow holds
// one dedicated LISTEN connection and wakes the watch hub on each
// notification and after every reconnect, and the hub reads the log after
// its own position, so a dropped connection delays events but never
// loses or repeats one.
//
// Readers: Get, Next and List run in one REPEATABLE READ READ ONLY
// snapshot. Every filter is SQL (query.go), the twin of sqlitestore's.
package pgstore
