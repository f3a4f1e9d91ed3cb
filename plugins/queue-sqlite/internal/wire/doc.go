// Package wire holds the queue protocol's wire shapes (animus-queue-protocol
// 0.3.2) and the byte-level rules the Rust reference plugins follow, so the
// plugin is indistinguishable from them to a host:
//
//   - request decoding with exact (case-sensitive) keys, null read as absent,
//     and serde-like messages naming the offending field (object.go,
//     params.go);
//   - SubjectRef's two wire forms, the legacy externally tagged one and the
//     generic flat one, with the reference's output rule (subject.go);
//   - SubjectDispatch decoded into a canonical model and re-encoded with
//     sorted keys, so what a host enqueues comes back byte-stable
//     (dispatch.go);
//   - chrono's two timestamp renderings (timefmt.go);
//   - result types whose Go field order is the alphabetical key order the
//     references emit (types.go).
//
// Nothing here touches storage or the runtime; the queue package maps the
// plain errors returned here onto JSON-RPC errors.
package wire
