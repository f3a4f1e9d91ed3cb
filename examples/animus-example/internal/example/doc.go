// Package example holds the handlers of the animus-example plugin. Each
// exists to exercise one part of pluginkit through a real child process:
// echo for round trips and large frames, slow for concurrency, progress and
// cancellation, stream for Peer notifications, fail for the error table.
package example
