// Package control is the transport's client for the Animus daemon's control
// socket: newline-delimited JSON-RPC 2.0 over a Unix socket
// (shared/reference/transport-http.md §1).
//
// It differs from the reference Rust client in the ways the issue asks for:
//
//   - Unary calls share a small Pool of persistent connections instead of
//     dialling once per HTTP request. Responses are matched to callers by id,
//     so several requests may be in flight on one connection; the pool
//     prefers an idle connection because the real daemon answers the
//     requests of one connection strictly in order.
//   - Every call has a deadline (the caller's context); a late reply is
//     dropped without harming the connection.
//   - Errors keep data.category (RPCError), and the three ways a call can
//     fail without a reply stay distinct: the socket could not be reached
//     (ErrUnreachable, an HTTP 503), the connection died or spoke garbage
//     after the request was written (ErrConnectionLost, an HTTP 502), and the
//     deadline passed (context.DeadlineExceeded, an HTTP 504).
//   - Streams (Subscribe) get a connection of their own, register the
//     subscription before the request is written (notifications can arrive
//     before the ack), route notifications by params.id, turn
//     subscription/closed into an end marker, and on Close send
//     $/cancelRequest and close the socket.
//
// Nothing here dials until the first call: transport/start must not touch
// the socket, which may not exist yet.
package control
