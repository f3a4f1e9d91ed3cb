// Package golden runs the golden conversations with the built plugin
// binaries: txtar scripts under testdata/<dir>/ (one directory per plugin,
// binary animus-<dir>) hold what the host sends and, as the golden, exactly
// what the plugin answers, normalised only where two runs differ. The
// format, the player and the normalisation are pkg/golden's; this package
// spawns each binary as the daemon does (e2e/fakehost) and validates every
// frame against the upstream schemas. The same scripts run in process from
// each plugin module's own TestGolden.
//
// Some binaries serve exactly another's wire surface over a different
// store: animus-queue-postgres runs the queue semantics of
// animus-queue-sqlite (pkg/queuekit/queue) over PostgreSQL, and
// animus-durable-postgres the step log of animus-durable-sqlite
// (pkg/durablekit), and animus-subject-postgres the subjects of
// animus-subject-sqlite (pkg/subjectkit). They play that binary's
// scripts unchanged (sharedScripts in golden_test.go; subtests
// <binary>/<dir>/<script>), each script in a store of its own — a fresh
// schema (e2e/internal/pgns, e2e/internal/pgns,
// e2e/internal/pgns) where the SQLite plugin gets a fresh project
// root — and their answers must equal the same golden section after one
// more normalisation, Equivalent, applied to both sides:
// plugin_info.name becomes <PLUGIN-NAME> and plugin_info.description
// <PLUGIN-DESCRIPTION> (the initialize answer).
// That is all: every other byte, error messages and codes, field order,
// health/check's answer and the exit included, must be the same, and a
// difference there is a difference in behaviour to fix in the binary, not
// to normalise away. -update rewrites the goldens from animus-<dir> alone.
// The PostgreSQL subtests need the cluster scripts/postgres.sh runs (they
// skip without $ANIMUS_PG_TEST_DSN, and fail under CI=true):
//
//	scripts/postgres.sh run -- env ANIMUS_BIN_DIR=$PWD/bin go test ./e2e/golden
//
// A changed answer fails TestGolden with a diff. When the change is
// intended, regenerate the goldens and review them in the diff:
//
//	make build && ANIMUS_BIN_DIR=$PWD/bin go test ./e2e/golden -update
package golden
