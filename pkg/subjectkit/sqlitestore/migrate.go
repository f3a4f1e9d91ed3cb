package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// migrations are numbered like the Rust plugin's schema_version table, and
// sqlitex records progress in PRAGMA user_version under BEGIN IMMEDIATE.
// A database made by the Rust plugin has user_version 0 and
// schema_version 1: migration 1 finds its tables already there and
// migration 2 converts them. Never edit a shipped migration; append.
var migrations = []sqlitex.Migration{
	{Version: 1, Name: "rust-v1 schema", Up: sqlitex.SQL(rustV1...)},
	{Version: 2, Name: "seq keys, kind ids, labels, events, comments", Up: migrateV2},
}

// rustV1 is the Rust plugin's migration 001 and its version table,
// verbatim apart from IF NOT EXISTS on the version row.
var rustV1 = []string{
	`CREATE TABLE IF NOT EXISTS schema_version (
		version INTEGER NOT NULL PRIMARY KEY,
		applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
	`CREATE TABLE IF NOT EXISTS subjects (
		id TEXT PRIMARY KEY,
		kind TEXT NOT NULL,
		title TEXT NOT NULL,
		body TEXT,
		status TEXT NOT NULL,
		priority INTEGER,
		assignee TEXT,
		labels TEXT NOT NULL DEFAULT '[]',
		parent_id TEXT,
		custom_fields TEXT NOT NULL DEFAULT '{}',
		native_status TEXT,
		status_metadata TEXT,
		attachments TEXT,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS idx_subjects_kind ON subjects(kind)`,
	`CREATE INDEX IF NOT EXISTS idx_subjects_status ON subjects(status)`,
	`CREATE INDEX IF NOT EXISTS idx_subjects_assignee ON subjects(assignee)`,
	`CREATE INDEX IF NOT EXISTS idx_subjects_parent_id ON subjects(parent_id)`,
	`INSERT OR IGNORE INTO schema_version (version) VALUES (1)`,
}

var v2Tables = []string{
	`CREATE TABLE subjects_v2 (
		seq INTEGER PRIMARY KEY AUTOINCREMENT,
		id TEXT NOT NULL UNIQUE,
		native_id TEXT NOT NULL UNIQUE,
		kind TEXT NOT NULL,
		title TEXT NOT NULL,
		body TEXT,
		status TEXT NOT NULL CHECK (status IN ('ready', 'in-progress', 'blocked', 'done', 'cancelled')),
		priority INTEGER,
		assignee TEXT,
		labels TEXT NOT NULL DEFAULT '[]',
		parent_id TEXT,
		custom_fields TEXT NOT NULL DEFAULT '{}',
		native_status TEXT,
		status_metadata TEXT,
		attachments TEXT,
		url TEXT,
		created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL,
		created_at_ns INTEGER NOT NULL,
		updated_at_ns INTEGER NOT NULL,
		rev INTEGER NOT NULL DEFAULT 1)`,
}

var v2Finish = []string{
	`DROP TABLE subjects`,
	`ALTER TABLE subjects_v2 RENAME TO subjects`,
	// Paging is keyset on seq, so each index ends in seq (implicitly, as
	// the rowid, or explicitly where a sort column comes first).
	`CREATE INDEX subjects_kind_status ON subjects(kind, status, seq)`,
	`CREATE INDEX subjects_kind ON subjects(kind, seq)`,
	`CREATE INDEX subjects_next ON subjects(kind, status, priority DESC, seq)`,
	`CREATE INDEX subjects_updated ON subjects(updated_at_ns)`,
	`CREATE INDEX subjects_native_status ON subjects(native_status)`,
	`CREATE INDEX subjects_assignee ON subjects(assignee)`,
	`CREATE INDEX subjects_parent ON subjects(parent_id)`,
	`CREATE INDEX subjects_attachments ON subjects(kind, seq) WHERE attachments IS NOT NULL`,
	`CREATE TABLE subject_labels (
		seq INTEGER NOT NULL REFERENCES subjects(seq) ON DELETE CASCADE,
		label TEXT NOT NULL,
		PRIMARY KEY (seq, label)) WITHOUT ROWID`,
	`CREATE INDEX subject_labels_label ON subject_labels(label, seq)`,
	`INSERT OR IGNORE INTO subject_labels (seq, label)
		SELECT s.seq, j.value FROM subjects s, json_each(s.labels) j WHERE j.type = 'text'`,
	`CREATE TABLE subject_events (
		seq INTEGER PRIMARY KEY AUTOINCREMENT,
		subject_id TEXT NOT NULL,
		kind TEXT NOT NULL,
		change_kind TEXT NOT NULL,
		event_json TEXT NOT NULL,
		created_at TEXT NOT NULL)`,
	`CREATE TABLE subject_comments (
		seq INTEGER PRIMARY KEY AUTOINCREMENT,
		subject_seq INTEGER NOT NULL REFERENCES subjects(seq) ON DELETE CASCADE,
		body TEXT NOT NULL,
		created_at TEXT NOT NULL)`,
	`CREATE INDEX subject_comments_subject ON subject_comments(subject_seq, seq)`,
	`INSERT OR IGNORE INTO schema_version (version) VALUES (2)`,
}

// legacyRow is one row of the Rust schema.
type legacyRow struct {
	id, kind, title, status, labels, custom, createdAt, updatedAt string
	body, assignee, parent, native, statusMeta, attachments       sql.NullString
	priority                                                      sql.NullInt64
}

// migrateV2 rebuilds subjects. Rows are copied in id order (the Rust ids
// are ULIDs, so this is creation order and becomes seq order), and ids
// are rewritten sqlite:<ULID> → <kind>:<ULID> — one way: the Rust plugin
// cannot read them afterwards. parent_id values that name a copied row
// are rewritten the same way.
func migrateV2(ctx context.Context, tx *sql.Tx) error {
	if err := sqlitex.SQL(v2Tables...)(ctx, tx); err != nil {
		return err
	}
	old, err := readLegacy(ctx, tx)
	if err != nil {
		return err
	}
	renamed := make(map[string]string, len(old))
	for _, r := range old {
		renamed[r.id] = r.kind + ":" + nativeOf(r.id)
	}
	for _, r := range old {
		created, err := model.ParseTime("created_at", r.createdAt)
		if err != nil {
			return fmt.Errorf("row %s: %w", r.id, err)
		}
		updated, err := model.ParseTime("updated_at", r.updatedAt)
		if err != nil {
			return fmt.Errorf("row %s: %w", r.id, err)
		}
		if !json.Valid([]byte(r.labels)) {
			return fmt.Errorf("row %s: labels are not JSON", r.id)
		}
		parent := r.parent
		if to, ok := renamed[parent.String]; parent.Valid && ok {
			parent.String = to
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO subjects_v2 (id, native_id, kind, title, body, status,
			priority, assignee, labels, parent_id, custom_fields, native_status, status_metadata,
			attachments, created_at, updated_at, created_at_ns, updated_at_ns)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			renamed[r.id], nativeOf(r.id), r.kind, r.title, r.body, r.status, r.priority, r.assignee,
			r.labels, parent, r.custom, r.native, r.statusMeta, r.attachments,
			rustjson.TimeZ(created), rustjson.TimeZ(updated), created.UnixNano(), updated.UnixNano())
		if err != nil {
			return fmt.Errorf("row %s: %w", r.id, err)
		}
	}
	return sqlitex.SQL(v2Finish...)(ctx, tx)
}

func readLegacy(ctx context.Context, tx *sql.Tx) ([]legacyRow, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, kind, title, body, status, priority, assignee,
		labels, parent_id, custom_fields, native_status, status_metadata, attachments, created_at,
		updated_at FROM subjects ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []legacyRow
	for rows.Next() {
		var r legacyRow
		if err := rows.Scan(&r.id, &r.kind, &r.title, &r.body, &r.status, &r.priority, &r.assignee,
			&r.labels, &r.parent, &r.custom, &r.native, &r.statusMeta, &r.attachments, &r.createdAt,
			&r.updatedAt); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// nativeOf is the native part of an id: the text after the first ':'.
func nativeOf(id string) string {
	if _, native, ok := strings.Cut(id, ":"); ok {
		return native
	}
	return id
}
