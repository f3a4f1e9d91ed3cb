// Package logsloki tests the animus-logs-loki binary end to end: the fake
// host spawns the built plugin as the daemon does, and the plugin talks
// HTTP and websocket to e2e/fakeloki on 127.0.0.1.
//
// With LOKI_URL set in the test environment (make e2e-loki) the same suite
// runs against that real Loki instead: tests that need fakeloki's fault
// injection or counters skip with a stated reason, and every test uses
// its own source_name and target prefix so runs do not collide.
package logsloki
