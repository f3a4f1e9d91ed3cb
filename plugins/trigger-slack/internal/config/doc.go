// Package config reads the plugin's environment into one Config value.
//
// Loading is lenient on purpose: --manifest and health/check must work
// without secrets (the daemon probes with a scrubbed environment), so a
// missing token or an invalid value is recorded, not fatal. The checks that
// matter run when the host opens the stream (trigger/watch) or calls an
// outbound method, and fail there with a message that names the variable and
// says "unset", which is what hosts and the conformance harness classify as
// missing configuration.
package config
