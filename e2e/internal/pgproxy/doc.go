// Package pgproxy is a loopback TCP proxy to put in front of PostgreSQL
// in fault tests: cut every connection, refuse new ones (the network is
// down), or, once, let a COMMIT reach the server and drop the reply, so
// the transaction is committed but the client only sees its connection
// die. It speaks just enough of the wire protocol (message framing, the
// Query and Parse/Bind/Execute messages) to recognise COMMIT; everything
// else passes through untouched.
//
// Only the standard library: the e2e module's build must not grow for a
// test helper.
package pgproxy
