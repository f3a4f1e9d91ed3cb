// Package sqlitex is the SQLite plumbing the SQLite-backed plugins share:
// opening a database file the way several plugin processes can use at
// once (WAL, a busy timeout, BEGIN IMMEDIATE for every transaction),
// numbered migrations that two processes may start at the same moment,
// and classification of SQLite errors into pluginkit categories.
//
// It uses github.com/mattn/go-sqlite3 (cgo). SQL that belongs to one
// plugin stays in that plugin's store package; only the pattern lives
// here.
package sqlitex
