// Package cursor encodes the opaque keyset cursors of log_storage/query:
// versioned, base64url JSON that pins the query window and the filter, so
// pages stay consistent and a cursor cannot be replayed against another
// filter.
//
// A cursor names the boundary timestamp (ns) of the last page and the ids
// already returned at exactly that timestamp. The next page re-reads from
// that timestamp inclusively and skips those ids, which keeps pagination
// exact across same-timestamp ties without relying on Loki's unspecified
// tie order.
package cursor
