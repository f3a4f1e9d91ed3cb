// Package binaries finds the plugin binaries e2e tests drive. Under
// `make e2e` they are the ones in $ANIMUS_BIN_DIR, built with the release
// flags; a plain `go test ./e2e/...` builds what it needs itself, so every
// test runs from a fresh clone without a prior make. Tests about the
// release stamping itself (packaging, the release tarballs in tools/dist)
// need `make build`'s binaries exactly: BuiltDir and StampedVersion.
package binaries
