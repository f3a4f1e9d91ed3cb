// Package watch runs subject/watch streams. Watches are cross-process:
// every mutation by any process writes a subject_events row in its own
// transaction, and one poller reads that log in seq (= commit) order and
// sends each event to every watcher whose filter matches, as
// subject/changed {id: <watch request id>, event}. In-process writes nudge
// the poller so they show at once; other processes' writes show within
// one poll interval, or at once where the backend can tell (PostgreSQL's
// NOTIFY, storage.Store.Follow). The log, not the nudge, is the record: a
// watcher's position lives here, so a lost nudge only delays an event.
package watch
