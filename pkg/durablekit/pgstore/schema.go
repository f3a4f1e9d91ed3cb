package pgstore

import "github.com/animus-plugins/animus-plugins/pkg/pgkit"

// migrations is the schema history of a PostgreSQL durable namespace;
// pgkit.Migrate records how far a schema has come in schema_migrations.
// Append only.
//
// Migration 1 is sqlitestore's schema 1: the same tables, columns,
// constraints and partial indexes, so every answer is the same. Types are
// chosen for identical answers, not for PostgreSQL idiom: times are bigint
// UTC nanoseconds as SQLite keeps them, and JSON values are text holding
// the compact JSON verbatim (jsonb would reorder keys and renormalise
// numbers), NULL meaning absent.
var migrations = []pgkit.Migration{
	{Version: 1, Name: "durable store (meta, runs, steps)", Up: []string{
		// One row of counters, updated only under the namespace lock.
		// last_epoch and last_commit_seq only grow: they are why a restart,
		// or another process, never hands out an epoch or a commit sequence
		// number twice.
		`CREATE TABLE meta (
			id              integer PRIMARY KEY CHECK (id = 1),
			last_epoch      bigint NOT NULL CHECK (last_epoch >= 0),
			last_commit_seq bigint NOT NULL CHECK (last_commit_seq >= 0)
		)`,
		`INSERT INTO meta (id, last_epoch, last_commit_seq) VALUES (1, 0, 0)`,

		// A run is one (run_id, phase_id) workflow; epoch is the epoch of its
		// latest begin_workflow_run.
		`CREATE TABLE runs (
			run_id      text NOT NULL,
			phase_id    text NOT NULL,
			epoch       bigint NOT NULL,
			inputs_json text,            -- compact JSON, verbatim; NULL = absent
			created_at  bigint NOT NULL, -- UTC nanoseconds
			updated_at  bigint NOT NULL,
			PRIMARY KEY (run_id, phase_id)
		)`,
		`CREATE INDEX runs_by_epoch ON runs (epoch)`,

		// One row per reservation. committed rows carry the outcome and a
		// commit sequence number; the CHECKs keep the columns of each state
		// coherent so a half-written commit cannot exist.
		`CREATE TABLE steps (
			step_id         text PRIMARY KEY,
			run_id          text NOT NULL,
			phase_id        text NOT NULL,
			step_name       text NOT NULL,
			idempotency_key text NOT NULL,
			state           text NOT NULL CHECK (state IN ('reserved', 'committed', 'abandoned', 'superseded')),
			payload_json    text,
			reserved_at     bigint NOT NULL,
			expires_at      bigint NOT NULL,
			outcome         text CHECK (outcome IN ('success', 'error')),
			output_json     text,
			error_json      text,
			committed_at    bigint,
			commit_seq      bigint UNIQUE,
			released_at     bigint,
			release_reason  text,
			superseded_by   text,
			FOREIGN KEY (run_id, phase_id) REFERENCES runs (run_id, phase_id),
			CHECK ((state = 'committed') = (outcome IS NOT NULL AND committed_at IS NOT NULL AND commit_seq IS NOT NULL))
		)`,
		// The exactly-once backstop: at most one live-or-committed row per key.
		`CREATE UNIQUE INDEX steps_active_key ON steps (idempotency_key)
			WHERE state IN ('reserved', 'committed')`,
		// query_run and last_committed_step walk a run's commits in order.
		`CREATE INDEX steps_commits ON steps (run_id, phase_id, commit_seq)
			WHERE state = 'committed'`,
		// recover_in_flight reads only outstanding reservations.
		`CREATE INDEX steps_reserved ON steps (run_id, phase_id, reserved_at)
			WHERE state = 'reserved'`,
	}},
}

// SchemaVersion is the schema version this binary migrates to.
func SchemaVersion() int { return len(migrations) }
