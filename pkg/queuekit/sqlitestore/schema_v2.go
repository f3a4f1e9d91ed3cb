package sqlitestore

// v2Schema upgrades a 0.3.2 file in place (migration 2). It only adds:
// columns with NULL/0 defaults, tables and indexes, so every 0.3.2 row is
// valid as it is; entries leased under 0.3.2 stay old-style until their
// first v2 hand-out gives them identity (queue-v2.md §6.20 (5)).
// sqlitex.Migrate runs it in one BEGIN IMMEDIATE transaction and re-reads
// user_version under the lock, so several processes opening the same old
// file at once upgrade it exactly once.
var v2Schema = []string{
	// assigned_at_ns is the lease instant as a number: an old-style lease
	// ages from it whoever leased the entry (the 0.3.2 plugin only set
	// lease_expires_ns when the leasing process had the TTL setting, so
	// entries stuck by a crash were never reclaimed). Backfilled from the
	// wire text, which SQLite parses at millisecond precision.
	`ALTER TABLE entries ADD COLUMN assigned_at_ns INTEGER`,
	`UPDATE entries SET assigned_at_ns = CAST(unixepoch(assigned_at, 'subsec') * 1000000000 AS INTEGER)
		WHERE assigned_at IS NOT NULL`,
	// Canonical <kind>:<id>, set for every entry whose subject has one;
	// NULL for rows written by 0.3.2 (worked out from the dispatch when
	// needed).
	`ALTER TABLE entries ADD COLUMN qualified_id TEXT`,
	// Non-NULL ⇔ ticketed: the entry has a subject generation.
	`ALTER TABLE entries ADD COLUMN subject_generation INTEGER`,
	`ALTER TABLE entries ADD COLUMN workflow_generation INTEGER`,
	`ALTER TABLE entries ADD COLUMN lease_owner TEXT`,
	`ALTER TABLE entries ADD COLUMN lease_generation INTEGER NOT NULL DEFAULT 0`,
	// The exact expires_at text last emitted; lease_expires_ns holds the
	// same instant for comparisons.
	`ALTER TABLE entries ADD COLUMN lease_expires_at TEXT`,
	`ALTER TABLE entries ADD COLUMN repo_url TEXT`,
	`ALTER TABLE entries ADD COLUMN repo_base_ref TEXT`,
	`ALTER TABLE entries ADD COLUMN repo_head_ref TEXT`,
	`ALTER TABLE entries ADD COLUMN repo_collision_key TEXT`,
	`CREATE INDEX entries_qualified ON entries (qualified_id, subject_generation)`,
	`CREATE INDEX entries_collision ON entries (repo_collision_key, state, assigned_at_ns)`,
	// Finished ticketed entries, kept forever with their whole fence:
	// idempotent replays, already_applied and not_assigned answers depend
	// on them after any number of processes and restarts. entries keeps
	// only live rows, so no live query pays for history.
	`CREATE TABLE finished_entries (
		entry_id            TEXT PRIMARY KEY,
		subject_key         TEXT NOT NULL,
		qualified_id        TEXT NOT NULL,
		subject_generation  INTEGER NOT NULL,
		workflow_id         TEXT,
		workflow_generation INTEGER,
		lease_owner         TEXT,
		lease_generation    INTEGER NOT NULL,
		lease_expires_at    TEXT,
		repo_url            TEXT,
		repo_base_ref       TEXT,
		repo_head_ref       TEXT,
		outcome             TEXT NOT NULL CHECK (outcome IN ('completed', 'failed', 'cancelled', 'dropped')),
		finished_at         TEXT NOT NULL,
		finished_by         TEXT NOT NULL -- queue/v2/completion, queue/completion, queue/drop, expiry-sweep
	) WITHOUT ROWID`,
	// Highest subject generation ever allocated per canonical id: never
	// pruned, never decreased, so a subject's next entry gets the next
	// generation even after the queue emptied.
	`CREATE TABLE subject_generations (
		qualified_id    TEXT PRIMARY KEY,
		last_generation INTEGER NOT NULL
	) WITHOUT ROWID`,
	// Every idempotency key ever bound (the entry's own and the keys of
	// adds that returned an existing entry): never pruned.
	`CREATE TABLE idempotency_bindings (
		idem_key     TEXT PRIMARY KEY,
		entry_id     TEXT NOT NULL,
		request_hash TEXT NOT NULL,
		bound_at     TEXT NOT NULL
	) WITHOUT ROWID`,
}
