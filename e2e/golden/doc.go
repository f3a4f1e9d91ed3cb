// Package golden runs the golden conversations with the built plugin
// binaries: txtar scripts under testdata/<dir>/ (one directory per plugin,
// binary animus-<dir>) hold what the host sends and, as the golden, exactly
// what the plugin answers, normalised only where two runs differ. The
// format, the player and the normalisation are pkg/golden's; this package
// spawns each binary as the daemon does (e2e/fakehost) and validates every
// frame against the upstream schemas. The same scripts run in process from
// each plugin module's own TestGolden.
//
// A changed answer fails TestGolden with a diff. When the change is
// intended, regenerate the goldens and review them in the diff:
//
//	make build && ANIMUS_BIN_DIR=$PWD/bin go test ./e2e/golden -update
package golden
