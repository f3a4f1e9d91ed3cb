package main

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/oklog/ulid/v2"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	store "github.com/animus-plugins/animus-plugins/pkg/subjectkit/sqlitestore"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testtool seed|hold|rustdb -db PATH [...]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	db := fs.String("db", "", "database file")
	n := fs.Int("n", 1000, "subjects to insert (seed)")
	kinds := fs.String("kinds", "task", "comma-separated kinds to cycle through (seed)")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "seed":
		err = seed(*db, *n, strings.Split(*kinds, ","))
	case "hold":
		err = hold(*db, os.Stdin, os.Stdout)
	case "rustdb":
		err = rustDB(*db)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtool:", err)
		os.Exit(1)
	}
}

var seedLabels = []string{"backend", "frontend", "infra", "docs", "bug", "feature", "p1", "p2"}

func seed(path string, n int, kinds []string) error {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Path: path, AutoMigrate: true})
	if err != nil {
		return err
	}
	st.Close()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000&_journal_mode=WAL&_txlock=immediate")
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.Prepare(`INSERT INTO subjects (id, native_id, kind, title, body, status, priority, assignee,
		labels, custom_fields, created_at, updated_at, created_at_ns, updated_at_ns)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	lab, err := tx.Prepare(`INSERT INTO subject_labels (seq, label) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	base := time.Now().UTC().Add(-time.Duration(n) * time.Second)
	for i := range n {
		at := base.Add(time.Duration(i) * time.Second)
		native := ulid.MustNew(ulid.Timestamp(at), ulid.DefaultEntropy()).String()
		kind := kinds[i%len(kinds)]
		labels := []string{seedLabels[i%len(seedLabels)]}
		if i%3 == 0 {
			labels = append(labels, seedLabels[(i/3+1)%len(seedLabels)])
			if labels[1] == labels[0] {
				labels = labels[:1]
			}
		}
		lj, _ := rustjson.Marshal(labels)
		ts := rustjson.TimeZ(at)
		res, err := ins.Exec(kind+":"+native, native, kind, fmt.Sprintf("seeded subject %d", i),
			"A seeded description long enough to look like a real task body.", string(model.Statuses[i%5]),
			(i/5)%5, fmt.Sprintf("agent:%d", i%7), string(lj), ts, ts, at.UnixNano(), at.UnixNano())
		if err != nil {
			return err
		}
		seq, _ := res.LastInsertId()
		for _, l := range labels {
			if _, err := lab.Exec(seq, l); err != nil {
				return err
			}
		}
	}
	// No ANALYZE: a database the plugin grew never gets one either, so
	// the benchmarks see the query plans operators get.
	return tx.Commit()
}

// hold takes the database's write lock (BEGIN IMMEDIATE), says "locked"
// on stdout, and keeps it until stdin closes.
func hold(path string, in io.Reader, out io.Writer) error {
	db, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`CREATE TABLE IF NOT EXISTS testtool_hold (x)`); err != nil {
		return err
	}
	fmt.Fprintln(out, "locked")
	_, err = io.Copy(io.Discard, bufio.NewReader(in))
	return err
}

// rustDB writes the Rust plugin's migration 001, its schema_version row
// and three rows in its formats (sqlite: ids, chrono to_rfc3339 times).
func rustDB(path string) error {
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		return err
	}
	defer db.Close()
	stmts := []string{
		`CREATE TABLE schema_version (version INTEGER NOT NULL PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)`,
		`CREATE TABLE subjects (id TEXT PRIMARY KEY, kind TEXT NOT NULL, title TEXT NOT NULL, body TEXT,
			status TEXT NOT NULL, priority INTEGER, assignee TEXT, labels TEXT NOT NULL DEFAULT '[]', parent_id TEXT,
			custom_fields TEXT NOT NULL DEFAULT '{}', native_status TEXT, status_metadata TEXT, attachments TEXT,
			created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
		`CREATE INDEX idx_subjects_kind ON subjects(kind)`,
		`CREATE INDEX idx_subjects_status ON subjects(status)`,
		`CREATE INDEX idx_subjects_assignee ON subjects(assignee)`,
		`CREATE INDEX idx_subjects_parent_id ON subjects(parent_id)`,
		`INSERT INTO schema_version (version) VALUES (1)`,
		`INSERT INTO subjects VALUES ('sqlite:01HZZZ0000000000000000000A', 'task', 'legacy parent', 'from rust', 'ready', 2, 'alice',
			'["backend","P1"]', NULL, '{"story_points":5}', NULL, NULL, NULL,
			'2026-05-13T13:55:00.123456789+00:00', '2026-05-13T13:55:00.123456789+00:00')`,
		`INSERT INTO subjects VALUES ('sqlite:01HZZZ0000000000000000000B', 'task', 'legacy child', NULL, 'in-progress', NULL, NULL,
			'[]', 'sqlite:01HZZZ0000000000000000000A', '{}', 'In Review', '{"color":"#fff"}',
			'[{"id":"d1","kind":"document","uri":"file:///spec.md"}]',
			'2026-05-13T13:55:01+00:00', '2026-05-13T13:55:02+00:00')`,
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return err
		}
	}
	return nil
}
