// Package golden runs golden conversations with the built plugin binaries:
// txtar scripts under testdata/<dir>/ (one directory per plugin, binary
// animus-<dir>) hold what the host sends and, as the golden, exactly what
// the plugin answers, normalised only where two runs differ (times, ULIDs,
// the project root, the build version, health gauges, and a script's own
// rules). The format is documented on Script; the files read as wire-level
// documentation of each plugin.
//
// A changed answer fails TestGolden with a diff. When the change is
// intended, regenerate the goldens and review them in the diff:
//
//	make build && ANIMUS_BIN_DIR=$PWD/bin go test ./e2e/golden -update
//
// Every frame is also validated against the upstream schemas, and any
// wire violation fails the conversation.
package golden
