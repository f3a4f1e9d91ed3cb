package sqlitestore

import "github.com/animus-plugins/animus-plugins/pkg/sqlitex"

// migrations is the schema history; PRAGMA user_version records how far a
// file has come. Append only.
//
// entries holds live entries only (pending, assigned, held); completion,
// drop and expiry delete the row, and the audit table keeps its history.
// ordinal is the queue position: enqueue appends max+1, reorder moves named
// entries below the current minimum. Timestamps are kept twice: as the text
// that goes on the wire, and as UTC nanoseconds for comparisons (clamped to
// the int64 range; see the queue package).
var migrations = []sqlitex.Migration{
	{Version: 1, Name: "entries and audit", Up: sqlitex.SQL(
		`CREATE TABLE entries (
			entry_id          TEXT PRIMARY KEY,
			ordinal           INTEGER NOT NULL,
			state             TEXT NOT NULL CHECK (state IN ('pending', 'assigned', 'held')),
			subject_key       TEXT NOT NULL,
			task_id           TEXT,
			workflow_ref      TEXT NOT NULL,
			workflow_id       TEXT,
			enqueued_at       TEXT NOT NULL,
			assigned_at       TEXT,
			held_at           TEXT,
			run_at            TEXT,    -- verbatim, echoed as given
			run_at_ns         INTEGER, -- NULL when absent or unparseable
			expire_after_secs TEXT,    -- u64 as decimal text: lossless above 2^63-1
			expire_at_ns      INTEGER, -- run_at + grace; NULL = never expires
			lease_expires_ns  INTEGER, -- opt-in lease TTL; NULL = no expiry
			dispatch          TEXT NOT NULL
		)`,
		`CREATE UNIQUE INDEX entries_ordinal ON entries (ordinal)`,
		`CREATE INDEX entries_state_ordinal ON entries (state, ordinal)`,
		`CREATE INDEX entries_state_run_at ON entries (state, run_at_ns)`,
		`CREATE INDEX entries_subject ON entries (subject_key)`,
		// The sweep runs at the start of every enqueue, lease and
		// next_deadline: a range on this index keeps it O(expired) however
		// deep the queue is (a partial index on expire_at_ns alone loses to
		// the state indexes in SQLite's planner and the sweep turns into a
		// scan of every pending row).
		`CREATE INDEX entries_state_expiry ON entries (state, expire_at_ns)`,
		// Per-state counts kept by triggers in the same transaction as the
		// change, so stats (and every list's stats) cost O(1) instead of a
		// count over the whole queue.
		`CREATE TABLE state_counts (state TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID`,
		`INSERT INTO state_counts (state, n) VALUES ('pending', 0), ('assigned', 0), ('held', 0)`,
		`CREATE TRIGGER entries_count_insert AFTER INSERT ON entries BEGIN
			UPDATE state_counts SET n = n + 1 WHERE state = NEW.state;
		END`,
		`CREATE TRIGGER entries_count_delete AFTER DELETE ON entries BEGIN
			UPDATE state_counts SET n = n - 1 WHERE state = OLD.state;
		END`,
		`CREATE TRIGGER entries_count_update AFTER UPDATE OF state ON entries WHEN OLD.state <> NEW.state BEGIN
			UPDATE state_counts SET n = n - 1 WHERE state = OLD.state;
			UPDATE state_counts SET n = n + 1 WHERE state = NEW.state;
		END`,
		`CREATE TABLE audit (
			seq         INTEGER PRIMARY KEY,
			entry_id    TEXT NOT NULL,
			subject_key TEXT NOT NULL,
			at          TEXT NOT NULL,
			at_ns       INTEGER NOT NULL,
			method      TEXT NOT NULL,
			from_status TEXT,          -- NULL for enqueue
			to_status   TEXT NOT NULL, -- a live status, or completed/failed/cancelled/dropped/expired
			workflow_id TEXT,
			reason      TEXT
		)`,
		`CREATE INDEX audit_entry ON audit (entry_id, seq)`,
		`CREATE INDEX audit_at ON audit (at_ns)`,
	)},
	{Version: 2, Name: "generation-fenced leases (queue 0.4.0)", Up: sqlitex.SQL(v2Schema...)},
}

// SchemaVersion is the user_version this binary migrates to.
func SchemaVersion() int { return len(migrations) }
