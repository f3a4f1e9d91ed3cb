// Package queuesqlite tests animus-queue-sqlite through its built binary,
// the way the Animus daemon drives a queue: a fresh process for every call,
// several processes against one project at once, and processes that die.
// It runs the conformance runner's generic and queue suites, checks the
// wire bytes the references would produce, proves that concurrent leases
// never hand out an entry twice and that SIGKILL leaves the database
// consistent, and exercises the operator's inspect command.
package queuesqlite
