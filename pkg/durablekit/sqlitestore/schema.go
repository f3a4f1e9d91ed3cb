package sqlitestore

import "github.com/animus-plugins/animus-plugins/pkg/sqlitex"

// migrations is the schema, one numbered step per change. Times are Unix
// nanoseconds (UTC) so comparisons are integer comparisons; JSON values are
// stored compact, NULL meaning absent.
var migrations = []sqlitex.Migration{
	{Version: 1, Name: "durable store", Up: sqlitex.SQL(
		// One row of counters. last_epoch and last_commit_seq only grow;
		// they are why a restart never hands out an epoch twice.
		`CREATE TABLE meta (
			id              INTEGER PRIMARY KEY CHECK (id = 1),
			last_epoch      INTEGER NOT NULL CHECK (last_epoch >= 0),
			last_commit_seq INTEGER NOT NULL CHECK (last_commit_seq >= 0)
		)`,
		`INSERT INTO meta (id, last_epoch, last_commit_seq) VALUES (1, 0, 0)`,

		// A run is one (run_id, phase_id) workflow; epoch is the epoch of its
		// latest begin_workflow_run.
		`CREATE TABLE runs (
			run_id      TEXT NOT NULL,
			phase_id    TEXT NOT NULL,
			epoch       INTEGER NOT NULL,
			inputs_json TEXT,
			created_at  INTEGER NOT NULL,
			updated_at  INTEGER NOT NULL,
			PRIMARY KEY (run_id, phase_id)
		)`,
		`CREATE INDEX runs_by_epoch ON runs (epoch)`,

		// One row per reservation. committed rows carry the outcome and a
		// commit sequence number; the CHECKs keep the columns of each state
		// coherent so a half-written commit cannot exist.
		`CREATE TABLE steps (
			step_id         TEXT PRIMARY KEY,
			run_id          TEXT NOT NULL,
			phase_id        TEXT NOT NULL,
			step_name       TEXT NOT NULL,
			idempotency_key TEXT NOT NULL,
			state           TEXT NOT NULL CHECK (state IN ('reserved', 'committed', 'abandoned', 'superseded')),
			payload_json    TEXT,
			reserved_at     INTEGER NOT NULL,
			expires_at      INTEGER NOT NULL,
			outcome         TEXT CHECK (outcome IN ('success', 'error')),
			output_json     TEXT,
			error_json      TEXT,
			committed_at    INTEGER,
			commit_seq      INTEGER UNIQUE,
			released_at     INTEGER,
			release_reason  TEXT,
			superseded_by   TEXT,
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
	)},
}
