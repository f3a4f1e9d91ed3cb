// Package dist builds the release artifacts behind `make dist`: one
// reproducible .tar.gz per plugin and platform, holding the binary, its
// `--manifest` output (manifest.json), a plugin.toml in the upstream
// `animus.plugin.v1` format and the LICENSE, plus a SHA256SUMS file in
// sha256sum(1) format.
//
// Everything in a tarball that describes the plugin is read from the binary
// itself, never from a hand-kept table, so the release metadata cannot drift
// from the code: manifest.json is the bytes `--manifest` printed under the
// daemon's scrubbed probe, and plugin.toml is rendered from that manifest
// plus the binary's own `initialize` reply (the manifest has no
// streaming/progress/cancellation flags; the handshake does). The same run
// checks that the version given to the build (from `git describe`) is the
// one the binary reports in both places.
//
// A cross-built binary (linux/arm64 from an amd64 machine) cannot be run, so
// its metadata comes from the native build of the same plugin at the same
// version, and the cross binary itself is checked for its ELF machine and
// for the stamped version string.
//
// Tarballs are reproducible: entries in a fixed order, one fixed mtime (the
// commit time, from SOURCE_DATE_EPOCH or the caller), uid/gid 0 with empty
// owner names, modes 0755 for the binary and 0644 for the rest, and a gzip
// header without name or timestamp.
//
// The package's tests include the release itself: the command, built as
// `make dist` runs it, packs the binaries `make build` stamped (so they run
// in `make e2e`), and every tarball, plugin.toml and SHA256SUMS is checked
// against what the binaries say about themselves.
package dist
