// Package benchreport turns the output of `go test -bench` over e2e/bench
// into issue 19's standing: the rows that have a goal (Rows), each with its
// measured value, its limit (the baseline measured in the same run), the
// ratio, the goal and whether it is met.
//
//   - Parse reads go test's output: the header (goos, goarch, pkg, cpu),
//     every result line (name, iterations, then "<value> <unit>" pairs:
//     ns/op and each b.ReportMetric), and the lines worth keeping raw.
//     Output.Lookup finds a benchmark by its name without go test's
//     -GOMAXPROCS suffix (the median of each metric when -count repeats it).
//   - Evaluate applies Rows to an Output: Met, NotMet, or, never an error,
//     Missing (the benchmark or its value's metric is not in the output)
//     and NoLimit (the value is there, its limit is not: "limit not
//     measured").
//   - Text renders the table make bench prints, Markdown writes
//     docs/benchmarks.md (the table, the commit, the machine, the raw
//     lines) and SVG the chart docs/benchmarks.svg.
//
// Every row's standing is also a single number, Outcome.Budget: the
// measurement as a share of what the goal allows (1 = exactly the goal,
// below 1 = met). For a "≤" goal it is measured/goal, for a "≥" goal
// goal/measured (a throughput ratio of 0.4 against ≥ 0.8 uses twice its
// budget), for the absolute goals value/goal. The chart draws it.
//
// The command is tools/cmd/animus-benchreport, run by `make bench`.
package benchreport
