// Package e2etest is the one helper set every e2e test package uses to
// drive a plugin binary through the fake host:
//
//   - Project makes a fresh project root, the directory the daemon binds a
//     plugin to (cwd and project_binding);
//   - Spawn (and SpawnContext, Config, Declared) starts a plugin the way one
//     of the daemon's callers does, from Options naming that caller's
//     environment allowlist and handshake, closes it at cleanup and prints
//     its wire log and stderr when the test failed (fakehost.New);
//   - Request (and RequestContext), Call, Failure and Try send one
//     request: any outcome, must succeed, must fail, or without a test at
//     hand (goroutines, processes killed mid-request); Decode reads a
//     result; Shutdown requires a clean exit;
//   - Schemas and Ctx are the upstream schema set (loaded once per test
//     binary) and a test-scoped deadline.
//
// Each package used to carry its own copy of these with its own
// signatures; what stays in a package is what is particular to its plugin
// (typed results, the per-call process model of the queue, a gateway).
package e2etest
