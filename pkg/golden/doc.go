// Package golden plays golden conversations: txtar scripts that hold what
// the host sends to a plugin and, as the golden, exactly what the plugin
// answers, normalised only where two runs differ (times, ULIDs, UUIDs, the
// project root, the build version, health gauges, and a script's own
// rules). The format is documented on Script.
//
// The same scripts run two ways, through one player (Play) behind the Conn
// interface:
//
//   - against the built binary, spawned as the daemon spawns it
//     (e2e/golden, with e2e/fakehost as the Conn), which is what an
//     operator runs;
//   - in process, over pluginkit.Serve on io.Pipe (pluginkittest.Host;
//     RunScripts for a plugin module's own tests), so `go test
//     ./plugins/<dir>/...` exercises the protocol layer without building
//     anything.
//
// The scripts live in e2e/golden/testdata/<dir>/; that directory is their
// one home and `go test ./e2e/golden -update` regenerates them.
package golden
