// Package rustjson is the one home of the encodings the Animus daemon and
// the reference Rust plugins produce, so that what a Go plugin writes is
// byte-identical to what serde_json and chrono would write:
//
//   - Marshal: compact JSON without HTML escaping and without a trailing
//     newline (serde_json::to_vec); Go's default would turn "<" into \u003c;
//   - Canonical: a free-form JSON value re-encoded with object keys sorted
//     at every level and number literals kept as written, which is what a
//     round trip through serde_json::Value (without preserve_order) gives;
//   - Time and TimeZ: chrono's RFC 3339 renderings of a UTC instant
//     (to_rfc3339 with "+00:00", serde's DateTime<Utc> with "Z"), with the
//     0, 3, 6 or 9 fraction digits chrono chooses;
//   - ParseTime: RFC 3339 as chrono parses a DateTime<Utc>.
//
// It uses the standard library only.
package rustjson
