// Package durable is the protocol half of every durable store plugin: the
// durable_store wire types (animus-durable-store-protocol 0.1.0), their
// validation, the project binding, the shared settings (Rules), and the
// handlers that turn the step log's results and errors (package steplog)
// into JSON-RPC answers with the kind's error codes (-32301..-32307). A
// plugin supplies only how to open its store (Options.Open).
//
// Semantics follow shared/reference/durable.md §4: the idempotency key alone
// identifies a step; committed outcomes are served back forever; a live
// reservation is reported, never duplicated; a commit after the TTL is
// accepted unless another caller has superseded the reservation.
package durable
