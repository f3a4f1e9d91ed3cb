// Package demo runs narrated sessions of the plugin binaries through the
// fake host, the way the Animus daemon would drive them, and prints every
// frame that crosses the wire. `make demo` runs it on embedded defaults
// (temp dirs, local fakes); the e2e tests run the same code.
//
// RunStory is the end-to-end story: one Slack mention driven through all
// seven plugins (trigger → subject and queue → durable steps with a
// SIGKILL and a replay → logs in Loki → completion and a signed webhook →
// REST and SSE through the HTTP transport), with the fake daemon's
// control socket fed the state the plugins produced. It runs as one daemon
// line (fakehost.Daemon06 or Daemon07): every plugin gets that line's
// handshakes, and as a 0.7 daemon the queue steps go through the
// generation-fenced queue/v2 methods behind the daemon's gate
// (story_queue07.go). `make demo` runs it as each line in turn. It
// returns a StoryResult that TestStory asserts on step by step, per line.
//
// Each plugin also contributes one Script, its own session. A script
// whose binary is not built is reported as such, never skipped silently.
package demo
