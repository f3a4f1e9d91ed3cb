// Package fakehost drives a built Animus plugin binary the way the real daemon
// does (and, in a mode, the way the official testkit does), speaking only the
// wire protocol: newline-delimited JSON-RPC 2.0 over the child's stdin/stdout.
//
// It is a black box on purpose. Plugins in this repository are built on
// pkg/pluginkit, and a fake host that shared code with it would share its bugs;
// fakehost therefore depends only on the standard library and on schemacheck.
//
// What it reproduces (shared/reference/host-and-lifecycle.md):
//
//   - the `--manifest` probe with a scrubbed environment, 5 s timeout and
//     1 MiB output caps (Probe, §3.2);
//   - spawning with no arguments, cwd = project root, and the daemon's
//     environment allowlist plus declared env_required names plus extras, or
//     the testkit's fully inherited environment (Start, §5, §13);
//   - the initialize/initialized handshake of each daemon caller and of the
//     testkit, byte for byte (Initialize and the Preset values, §6, §13),
//     as either daemon line sends it (Daemon06, Daemon07 in Config.Daemon;
//     Daemon.Handshake picks the caller from the plugin's kind);
//   - the daemon's streaming stdout reader that accepts pretty-printed frames,
//     drops malformed bytes to the next newline and gives up past 8 MiB, and
//     the older strict line-by-line reader (Config.LineMode, §2.3);
//   - the shutdown ladders of the daemon, of transports and of the testkit
//     (Shutdown, §8).
//
// Unlike the daemon, which silently drops what it cannot use, the fake host
// records every wire-rule breach it sees as a violation (Violations), so a test
// fails on behaviour the daemon would merely tolerate or lose: stray stdout
// bytes, id-bearing frames before the initialize reply, responses to
// notifications or to unknown ids, malformed envelopes and schema failures.
//
// Typical use in an integration test:
//
//	schemas, _ := schemacheck.Default()
//	h := fakehost.New(t, fakehost.Config{Binary: bin, Dir: projectDir, Schemas: schemas})
//	if _, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetQueueClient}); err != nil {
//		t.Fatal(err)
//	}
//	resp, err := h.Call(ctx, "health/check", nil)
//	...
//	rep, err := h.Shutdown(ctx, fakehost.LadderDaemon) // rep.ExitedByItself must be true
//
// New fails the test on any recorded violation; tests that provoke violations
// on purpose use Start, inspect Violations, and Close.
package fakehost
