// Package storagetest is the backend-neutral test suite of
// storage.Store: filters in SQL against model.Filter.Match, paging,
// ordering, children, cached totals across writers, concurrent
// read-modify-write updates, scoping, rollback and cascades. sqlitestore
// and pgstore each run it against their own database.
package storagetest
