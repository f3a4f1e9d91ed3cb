// Package compat builds docs/COMPATIBILITY.md, the compatibility matrix of
// the plugins, from the binaries themselves so it cannot drift from
// what they do (issue 10). For each plugin it records:
//
//   - every method the protocol defines for its kind (SpecMethods, a table
//     citing the spec or reference-note section of each), and whether the
//     binary serves it (listed in initialize's capabilities.methods) or
//     refuses it, with the JSON-RPC code and data.category of a real call;
//   - the Animus daemon lines it was written against (DaemonLines);
//   - what each daemon line the fake host speaks measures (LineRun, one
//     per line: 0.6 and 0.7): that line's handshake for the kind, its
//     gates (the 0.7 daemon's queue gate, the e2e suite's copy: Gates),
//     and the verdict of the conformance runner (e2e/conformance) run in
//     process with every scenario spawned as that line (the queue-v2
//     suite under 0.7 for a queue the gate accepts), with the same local
//     fakes the plugin's e2e TestConformance uses (Plugin.Upstream) and,
//     for animus-queue-postgres and animus-durable-postgres, a fresh
//     schema per scenario in the PostgreSQL cluster of scripts/postgres.sh
//     run (Plugin.Isolate);
//   - each known difference from the reference plugin and the reason
//     (Differences), harvested from the plugin READMEs and the reference
//     notes; tests tie the table to the READMEs item by item.
//
// Generate measures, Render writes Markdown. The output is deterministic
// except for one line, the binaries' version (VersionPrefix), so a test can
// regenerate the matrix and compare it with the committed file. A missing
// binary becomes a row that says so instead of an error. The command is
// tools/cmd/animus-compat, run by `make compat`. The animus-queue-postgres
// and animus-durable-postgres rows need $ANIMUS_PG_TEST_DSN: without it
// they report an error and the command exits non-zero, so run
// `scripts/postgres.sh run -- make compat` (make e2e already runs under
// that script).
package compat
