// Package pluginkittest drives a plugin in process the way a host does:
// pluginkit.Serve on io.Pipe, frames written and read as newline-delimited
// JSON-RPC, a wire log printed when a test fails. Plugin unit tests use it
// to see exactly what the daemon would see (params decoded by Handle,
// errors coded by toWire, results as encoded), and pkg/golden plays its
// scripts over it. It uses the standard library only.
package pluginkittest
