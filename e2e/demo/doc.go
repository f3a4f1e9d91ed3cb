// Package demo runs narrated sessions of the plugin binaries through the
// fake host, the way the Animus daemon would drive them, and prints every
// frame that crosses the wire. `make demo` runs it on embedded defaults
// (temp dirs, local fakes); the e2e tests run the same scripts.
//
// Each plugin contributes one Script. A script whose binary is not built
// is reported as such, never skipped silently.
package demo
