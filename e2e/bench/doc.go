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
//
// So do the animus-durable-postgres benchmarks (durable_pg_*_test.go):
//
//   - BenchmarkDurablePGBeginCommit: begin_step + commit_step pairs/s
//     with 1 and 8 concurrent long-lived plugin processes on one
//     namespace, against raw pgx running pgstore's statements for the same
//     two transactions on as many kept connections (durable_pg_raw_test.go,
//     a copy to re-make whenever pkg/durablekit/pgstore's SQL changes),
//     the ratio plugin/raw (goal ≥ 0.7), and animus-durable-sqlite's
//     pairs/s with as many processes, for reference;
//   - BenchmarkDurablePGRecoverInFlight1M: recover_in_flight through a
//     kept process on a namespace of 1,000,000 committed steps and 100
//     outstanding reservations (filled by SQL in about half a minute,
//     once per test binary run, dropped by TestMain), p50 (goal under
//     5 ms) and p99, with raw pgx's read alongside; the read's plan
//     (EXPLAIN ANALYZE) goes to stderr.
//
// And the animus-subject-postgres benchmarks (subject_pg_test.go), side by
// side with animus-subject-sqlite on the same 100,000 subjects (the SQLite
// file seeded as BenchmarkSubjectSQLite seeds it, copied into a namespace
// by `animus-subject-postgres import`):
//
//   - BenchmarkSubjectPGList: task/list {status:[ready],
//     labels_any:[backend,p1], limit:50}, repeated (list) and right after
//     an untimed update (list-after-write), p50/p99 per backend and the
//     ratio pg/sqlite; the count's and the page's plans go to stderr;
//   - BenchmarkSubjectPGWatchLatency: task/update on one process → the
//     matching subject/changed on another process's open watch (another
//     project root on the namespace, or the same file), p50/p99 per
//     backend (goal for PostgreSQL: within 100 ms).
package bench
