// Package wire holds the queue protocol's wire shapes (animus-queue-protocol
// 0.3.2, and 0.4.0's queue/v2/* with the animus-execution-protocol fence)
// and the byte-level rules the Rust reference plugins follow, so the
// plugin is indistinguishable from them to a host:
//
//   - request types that decode their own params (pluginkit.ParamsDecoder)
//     with exact (case-sensitive) keys, null read as absent, and serde-like
//     messages naming the offending field (object.go, params.go);
//   - SubjectRef's two wire forms, the legacy externally tagged one and the
//     generic flat one, with the reference's output rule (subject.go);
//   - SubjectDispatch decoded into a canonical model and re-encoded with
//     sorted keys, so what a host enqueues comes back byte-stable
//     (dispatch.go);
//   - result types whose Go field order is the alphabetical key order the
//     references emit (types.go);
//   - the 0.4.0 types: strict envelopes and fences that refuse unknown keys
//     in serde's words while the embedded dispatch stays lenient
//     (strict.go, fence.go, v2.go), validated with the crate's messages,
//     and the canonical subject id and idempotency hash (canonical.go).
//
// The encodings shared with the other plugins (compact JSON without HTML
// escaping, canonical JSON, chrono's timestamps) come from
// pluginkit/rustjson. Nothing here touches storage; the errors are plain,
// and pluginkit turns a DecodeParams failure into the references' -32602.
package wire
