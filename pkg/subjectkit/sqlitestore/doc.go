// Package sqlitestore is the only place that speaks SQL. It keeps subjects in
// one SQLite file that many plugin processes open at once (the daemon's,
// the CLI's, the workflow runner's): WAL, a busy timeout, and every
// mutation one BEGIN IMMEDIATE transaction that reads the row, writes the
// new state, its label rows, any comment and a subject_events row, so
// concurrent label edits never lose a write and the change log is in
// commit order.
//
// Schema: migration 1 is the Rust reference plugin's schema exactly (so a
// database it created is recognised); migration 2 rebuilds subjects with a
// seq key for keyset paging, kind-qualified ids, integer timestamps and
// the indexes every filter needs, and adds subject_labels,
// subject_events and subject_comments. Every SubjectFilter field is
// evaluated in SQL (query.go); Filter.Match in package model is its Go
// twin, used by watches, and the tests hold the two to the same answers.
package sqlitestore
