// Package demo runs narrated sessions of the plugin binaries through the
// fake host, the way the Animus daemon would drive them, and prints every
// frame that crosses the wire. `make demo` runs it on embedded defaults
// (temp dirs, local fakes); the e2e tests run the same code.
//
// RunStory is the end-to-end story: one Slack mention driven through all
// seven plugins (trigger → subject and queue → durable steps with a
// SIGKILL and a replay → logs in Loki → completion and a signed webhook →
// REST and SSE through the HTTP transport), with the fake daemon's
// control socket fed the state the plugins produced. It returns a
// StoryResult that TestStory asserts on step by step.
//
// Each plugin also contributes one Script, its own session. A script
// whose binary is not built is reported as such, never skipped silently.
package demo
