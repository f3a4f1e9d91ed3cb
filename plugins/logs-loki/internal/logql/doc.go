// Package logql translates a LogQuery filter into the LogQL the plugin
// sends to Loki, and evaluates the same filter in Go for entries that
// have not reached Loki yet (the read-your-writes buffer), so both paths
// agree by construction.
//
// Label design (see the README): service_name, source and level are stream
// labels (tens of streams in total); id, target and source_name are
// structured metadata, or, in parser mode, read from the JSON line with
// "| json". Target globs become anchored RE2: "*" is [^.]*, "**" is .*,
// everything else is literal.
package logql
