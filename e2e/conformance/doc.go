// Package conformance is a black-box conformance runner for Animus plugin
// binaries, ours or anyone's. Each scenario starts a fresh process through
// the fake host, drives it over the wire, and ends PASS, FAIL or SKIP with
// a reason. Every frame is checked for stdout discipline and against the
// upstream JSON Schemas, whatever the scenario asserts.
//
// The generic suite covers the lifecycle and wire rules every plugin must
// follow (spec §1–§8, host-and-lifecycle.md). Kind suites port the official
// testkit's scenarios (subject, trigger, transport, log-storage) and add
// the ones the testkit lacks; the plugin issues extend them.
//
// The queue-v2 suite (queue-v2.md §5.4) checks generation-fenced leases as
// the Animus 0.7 daemon uses them. It runs beside the 0.3.2 queue suite for
// a queue whose initialize passes RequireGenerationFencedQueue, the copy of
// the daemon's gate, and alone under --kind queue-v2; a queue that does
// not pass the gate gets the 0.3.2 suite exactly as before.
//
// Scenarios that need a slow, cancellable request (ping while busy, cancel,
// drain) spawn the plugin with ANIMUS_PLUGIN_HARNESS=slow and run when that
// process advertises "$harness/slow" and serves harness/slow {ms}: every
// pluginkit binary does (pluginkit.HarnessEnv), and a third-party plugin
// can opt in the same way. The others SKIP them, saying why.
//
// Scenarios that expect an empty store make a fresh project root (a
// temporary directory) and bind to it, which isolates a plugin that keeps
// its state under the root (animus-queue-sqlite). A plugin keyed by
// something else — animus-queue-postgres keeps its queue in a database
// namespace — gets the same isolation from Options.Isolate: called lazily
// once per scenario, its environment (a fresh schema) overlaid on every
// process the scenario spawns, once more for each further project the
// scenario makes, its cleanup run when the scenario ends. The scenarios
// do not change; the runner names no plugin.
package conformance
