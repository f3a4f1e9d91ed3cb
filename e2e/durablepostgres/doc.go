// Package durablepostgres drives the built animus-durable-postgres binary
// through the fake host, against the PostgreSQL cluster scripts/postgres.sh
// runs ($ANIMUS_PG_TEST_DSN; without one the tests skip, or fail under
// CI=true). A PostgreSQL step log is keyed by its namespace (schema), not
// by the bound project root, so every scenario that expects an empty log
// gets a fresh schema (conformance.Options.Isolate, e2e/internal/pgns).
//
// TestConformance puts the binary through every scenario the runner
// applies to it, as e2e/durablesqlite does for animus-durable-sqlite;
// TestParity runs the durable scenarios against both binaries and
// compares what each plugin said, frame for frame, after the
// normalisation described in parity_test.go. TestSeveralHosts (hosts_test.go)
// drives one namespace from processes bound to different project roots,
// as daemons on several machines do: eight racing begin_step on the same
// keys, then fifty SIGKILLs in the middle of steps, then recovery from yet
// another host. The fault tests (faults_test.go) restart PostgreSQL under
// that run and terminate the plugin's backend inside a commit;
// TestBackendUnavailable (unavailable_test.go) checks -32304 with
// data.retryable against an unreachable database.
//
// The package holds tests only.
package durablepostgres
