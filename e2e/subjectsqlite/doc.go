// Package subjectsqlite tests the built animus-subject-sqlite binary end to
// end, through the fake host and real child processes sharing real SQLite
// files: every method and error path, the conformance suite, cross-process
// label updates and watches, concurrent migration, and opening a database
// the Rust reference plugin created.
package subjectsqlite
