// Package queuepostgres drives the built animus-queue-postgres binary
// through the fake host, against the PostgreSQL cluster scripts/postgres.sh
// runs ($ANIMUS_PG_TEST_DSN; without one the tests skip, or fail under
// CI=true). A PostgreSQL queue is keyed by its namespace (schema), not by
// the bound project root, so every scenario that expects an empty queue
// gets a fresh schema (conformance.Options.Isolate).
//
// TestConformance puts the binary through every scenario the runner
// applies to it, as e2e/queuesqlite does for animus-queue-sqlite;
// TestParity runs the queue and queue-v2 scenarios against both binaries
// and compares what each plugin said, frame for frame, after the
// normalisation described in parity_test.go. The several-hosts and fault
// tests (hosts_test.go, faults_test.go) drive the shared queue from
// several daemons at once, with and without PostgreSQL failing under them.
package queuepostgres
