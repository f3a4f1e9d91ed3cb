// Package steplog is the durable step log's rules, written once for every
// backend (storage.Store): epochs, reservations and their fencing, the
// commit rules (the first outcome wins; an expired reservation that
// nobody superseded may still commit), abandon, terminal prior errors,
// query order and recovery. Each operation is one Update or View of the
// store, so concurrent processes see it whole or not at all.
package steplog
