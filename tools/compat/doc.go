// Package compat builds docs/COMPATIBILITY.md, the compatibility matrix of
// the seven plugins, from the binaries themselves so it cannot drift from
// what they do (issue 10). For each plugin it records:
//
//   - every method the protocol defines for its kind (SpecMethods, a table
//     citing the spec or reference-note section of each), and whether the
//     binary serves it (listed in initialize's capabilities.methods) or
//     refuses it, with the JSON-RPC code and data.category of a real call;
//   - the Animus daemon lines it was written against (DaemonLines), plus
//     what is measured for the 0.7 line: the 1.2.0 generic handshake and,
//     for the queue, the 0.7.0-rc.34 startup gate (Gates);
//   - the verdict of the conformance runner (e2e/conformance) run in
//     process, with the same local fakes the plugin's e2e TestConformance
//     uses (Plugin.Upstream);
//   - each known difference from the reference plugin and the reason
//     (Differences), harvested from the plugin READMEs and the reference
//     notes; tests tie the table to the READMEs item by item.
//
// Generate measures, Render writes Markdown. The output is deterministic
// except for one line, the binaries' version (VersionPrefix), so a test can
// regenerate the matrix and compare it with the committed file. A missing
// binary becomes a row that says so instead of an error. The command is
// tools/cmd/animus-compat, run by `make compat`.
package compat
