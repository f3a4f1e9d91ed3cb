// Package transport is animus-transport-http's transport_backend: the
// transport/start, transport/shutdown and transport/schema methods, the
// health report, and the validation of TransportConfig and its config
// object (shared/reference/transport-http.md §2).
//
// It owns at most one listener. transport/start validates everything first
// (paths, bind address, tokens, origins, limits), binds, and starts serving
// without touching the control socket, which may not exist yet. A bind that
// fails says why in data.category (address_in_use, permission_denied,
// other); a second start while serving is refused rather than leaking the
// first listener. transport/shutdown closes the listening socket at once,
// lets in-flight requests finish up to the drain deadline, ends SSE streams
// with `event: end`, and only then answers; it is idempotent.
//
// Security fails closed: without a bearer token only a loopback bind_addr
// is accepted, tokens come only from environment variables, and unknown
// config keys are refused so a misspelt setting is never silently ignored.
package transport
