// Package conformancetest runs the conformance runner from Go tests: one
// call puts a built plugin binary through every scenario that applies to
// it, exactly as `animus-plugin-conformance` would.
package conformancetest
