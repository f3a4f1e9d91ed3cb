// Package bench measures pluginkit through real child processes. It holds
// benchmarks only (run by `make bench`) and memory checks that assert
// bounds on resident memory, never on time.
//
// The animus-queue-postgres benchmarks (queue_pg_*_test.go) need the
// cluster scripts/postgres.sh runs ($ANIMUS_PG_TEST_DSN; without it they
// skip, or fail under CI=true), as make bench provides:
//
//   - BenchmarkQueuePGColdStart: spawn → initialize → queue/stats → exit,
//     sub-benchmarks backend=sqlite and backend=postgres;
//   - BenchmarkQueuePGV2Cycle: queue/v2 enqueue → lease → completion
//     cycles/s with 1, 4 and 16 concurrent workers, kept processes
//     (model=kept) and a process per call (model=percall), each against
//     raw pgx running pgstore's statements (queue_pg_raw_test.go, a copy
//     to re-make whenever pgstore's SQL changes) at the same concurrency,
//     and the ratio plugin/raw;
//   - BenchmarkQueuePGV2LeaseDepth: queue/v2/lease + release_pending in a
//     kept process at depth 100 and 1,000,000 (filled by SQL in about a
//     minute, once per test binary run; ANIMUS_BENCH_PG_DEPTH sets another
//     depth), and the ratio. This package's TestMain drops the filled
//     namespaces when the run ends.
package bench
