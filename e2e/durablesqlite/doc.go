// Package durablesqlite tests animus-durable-sqlite through its built binary
// and the fake host, as the agent runner drives it: the conformance suite
// (generic plus durable), eight processes racing begin_step on one project,
// and fifty SIGKILLs of a begin/commit loop with the exactly-once invariants
// checked after each, through a fresh plugin process and in the SQLite file
// itself.
//
// The package holds tests only.
package durablesqlite
