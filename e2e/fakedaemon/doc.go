// Package fakedaemon is a stand-in for the Animus daemon's control socket
// (shared/reference/transport-http.md §1 and the control-server half of §7),
// for testing transports such as animus-transport-http against real Unix
// sockets.
//
// It speaks what the real daemon speaks: NDJSON JSON-RPC 2.0 on a socket
// created with mode 0700; each connection's unary requests answered strictly
// in order (a slow one holds up the next); the method table of §1.3 over a
// small in-memory state (workflows, queue, subjects, plugins) with the real
// categories and codes of §1.6; parse errors answered without an id;
// unknown methods -32601 and bad params -32602 without data; the streaming
// handshake ({"watching":true} ack, params {id, data} notifications,
// subscription/closed for workflow/events only); $/cancelRequest matched on
// the stringified request id; a second stream under the same id aborting the
// first; every stream on a connection aborted when it closes.
//
// The real daemon's quirks are reproduced by default where they are
// unconditional (daemon/logs is always a stream and a finite one has no end
// marker; agent/*, project/*, daemon/stop and daemon/restart are
// not_supported; subject/list needs filter.kind; subject/get needs a
// <kind>:<id> id) and behind switches where they vary (Options:
// notifications before the ack, workflow/events unavailable or unknown).
// Faults are injected per method at run time: slow replies (SetDelay), a
// connection dropped mid-call (DropOn), an undecodable reply (GarbageOn), an
// arbitrary category error (FailWith) and RBAC denial (Deny).
//
// Tests observe what reached it (Requests, Connections, Cancels,
// ActiveStreams) and drive streams (EmitEvent, EmitLog, EmitWorkflowEvent,
// CloseWorkflowStreams, EmitSubjectChanged).
package fakedaemon
