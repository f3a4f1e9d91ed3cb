// Package storage is the boundary between the subject rules (package
// subjects) and the databases that keep subjects: the row-level types and
// Store, the only interface of the kit, with exactly two implementations
// (sqlitestore and pgstore). Everything that decides what a change means —
// patch rules, filters in Go, event classification, paging and error
// wording — lives above it, once.
package storage
