// Package queuev2 is the Animus queue 0.4.0 surface (queue/v2/*) as the
// Animus 0.7 daemon sees it, for the e2e tests that play that daemon: the
// wire types of queue-v2.md §2 (ExecutionFence and its parts,
// FencedQueueEntry, the lease, enqueue and ticket mutation responses),
// DecodeStrict, the daemon's strict decoding of every v2 response, and
// the checks the daemon applies to what a queue hands back:
//
//   - ExecutionFence.Validate: the crate's basic, queue-backed and coding
//     validation levels (§2.5);
//   - AcceptLeased (and CheckWorkflowID): FencedQueueEntry::validate plus
//     the dispatch tick's own checks on each leased item (§4.2);
//   - AcceptRenew and AcceptRecover (CheckRenew, CheckRecover,
//     SameIdentity): the renewal and recovery transition rules (§4.3,
//     §4.4).
//
// The conformance suite (e2e/conformance, kind "queue-v2") and the
// scripted daemon tests of e2e/queuesqlite both use it, so a rule lives
// here once.
package queuev2
