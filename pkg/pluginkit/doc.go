// Package pluginkit is the plugin side of the Animus plugin protocol: the
// runtime every animus-plugins binary stands on.
//
// Animus spawns a plugin as a child process and speaks newline-delimited
// JSON-RPC 2.0 over its stdin and stdout. pluginkit owns every rule of that
// conversation once, so that no plugin re-implements framing, lifecycle or
// errors:
//
//   - framing: one compact JSON value per line out; lines (or pretty-printed
//     frames) of up to 16 MiB in, with -32700/-32600 for bad input and no
//     unbounded buffering of oversized lines (reader.go, writer.go);
//   - lifecycle: initialize → initialized → steady state → shutdown → exit,
//     with stdin EOF and SIGTERM draining the same way; the states, their
//     gates, the built-in methods and every time limit (a shutdown reply
//     within 1.5 s whatever handlers, tasks and Close do) are in
//     lifecycle.go; what is in flight is one state changed in one function
//     (inflight.go); reading and routing frames is server.go;
//   - shared methods: $/ping, health/check, $/cancelRequest, $/progress
//     (health.go, peer.go);
//   - dispatch: typed handlers registered with Handle, whose table is also the
//     advertised capability list, run concurrently under a bound; every
//     handler's params go through one decode path, with ParamsDecoder for
//     types that read their own JSON (mux.go, queue.go);
//   - the project: InitializeParams.Binding tells an absent project_binding
//     from a malformed one, and ProjectPath is the one rule from a
//     configured file to an absolute path (binding.go);
//   - errors: one Error type, one category→code table, one function that
//     decides what the host sees (errors.go);
//   - the command line: --manifest, --version, --help, the TTY guard, stderr
//     JSON logging with secret redaction, and stdout reserved for frames
//     (main.go, manifest.go, logging.go).
//
// A plugin's main function builds a Mux, registers its handlers and hands a
// Plugin to Main. Tests run the same Plugin in process with Serve over
// io.Pipe.
//
// Subpackage rustjson is the one home of the encodings the Rust side
// produces (serde_json without HTML escaping, canonical re-encoding,
// chrono timestamps). The package uses the standard library only.
package pluginkit
