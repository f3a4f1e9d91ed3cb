package store

import "github.com/animus-plugins/animus-plugins/pkg/sqlitex"

// migrations are the outbox schema, oldest first. Times are Unix
// milliseconds.
var migrations = []sqlitex.Migration{
	{Version: 1, Name: "outbox", Up: sqlitex.SQL(
		`CREATE TABLE deliveries (
			delivery_id      TEXT PRIMARY KEY,
			delivery_key     TEXT NOT NULL UNIQUE,
			project_root     TEXT NOT NULL,
			event_id         TEXT NOT NULL,
			event_type       TEXT NOT NULL,
			workflow_id      TEXT,
			task_id          TEXT,
			connector_id     TEXT NOT NULL,
			connector_type   TEXT NOT NULL,
			subscription_id  TEXT NOT NULL,
			quiet            INTEGER NOT NULL DEFAULT 0 CHECK (quiet IN (0, 1)),
			payload          BLOB NOT NULL,
			status           TEXT NOT NULL CHECK (status IN ('pending', 'inflight', 'sent', 'dead')),
			attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
			next_attempt_at  INTEGER NOT NULL,
			claim_token      INTEGER,
			claimed_pid      INTEGER,
			last_error       TEXT,
			last_status_code INTEGER,
			created_at       INTEGER NOT NULL,
			updated_at       INTEGER NOT NULL,
			sent_at          INTEGER,
			dead_at          INTEGER
		)`,
		// Claims walk one project's due rows in order.
		`CREATE INDEX deliveries_due ON deliveries (project_root, status, next_attempt_at)`,
		// Stale-claim recovery, pruning of sent rows and dead-letter counts.
		`CREATE INDEX deliveries_status ON deliveries (status, updated_at)`,
		// Every project that ever enqueued, so flush {} reaches all of them
		// after a restart without scanning the outbox.
		`CREATE TABLE projects (
			project_root  TEXT PRIMARY KEY,
			first_seen_at INTEGER NOT NULL
		) WITHOUT ROWID`,
	)},
}
