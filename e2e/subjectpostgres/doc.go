// Package subjectpostgres drives the built animus-subject-postgres binary
// through the fake host, against the PostgreSQL cluster
// scripts/postgres.sh runs ($ANIMUS_PG_TEST_DSN; without one the tests
// skip, or fail under CI=true). Its subjects are keyed by the namespace
// (schema), not by the bound project root, so every test, and every
// conformance scenario, gets a fresh schema (e2e/internal/pgns), and
// several "hosts" are several project roots pointing at one namespace, as
// daemons on several machines do.
//
// TestConformance puts the binary through every scenario the runner
// applies to it, as e2e/subjectsqlite does for animus-subject-sqlite;
// TestTwoHostsWatch (hosts_test.go) is the cross-host watch proof: 2,000
// concurrent updates from two hosts reach both hosts' watches exactly as
// the change log records them, also when the watchers' LISTEN sessions
// are terminated in the middle; TestConcurrentLabelsAdd (labels_test.go)
// loses no label under contention from four processes;
// TestImportFromSQLite (import_test.go) moves an animus-subject-sqlite
// database into a namespace. The goldens of animus-subject-sqlite are
// played against this binary by e2e/golden.
//
// The package holds tests only.
package subjectpostgres
