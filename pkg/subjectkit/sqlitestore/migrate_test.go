package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// A database the Rust plugin (v0.1.0–v0.1.4) created: its schema, its
// schema_version row, sqlite: ids, chrono to_rfc3339 timestamps, NULL
// status_metadata and JSON attachments.
func makeRustDB(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range rustV1 {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	rows := []string{
		`('sqlite:01HZZZ0000000000000000000B', 'task', 'second', NULL, 'in-progress', NULL, NULL, '[]', 'sqlite:01HZZZ0000000000000000000A', '{}', 'In Review', '{"color":"#fff"}', NULL, '2026-05-13T13:55:01+00:00', '2026-05-13T13:55:02.5+00:00')`,
		`('sqlite:01HZZZ0000000000000000000A', 'task', 'first', 'body', 'ready', 2, 'alice', '["backend","P1"]', NULL, '{"story_points":5}', NULL, NULL, '[{"id":"d1","kind":"document","uri":"file:///x"}]', '2026-05-13T13:55:00.123456789+00:00', '2026-05-13T13:55:00.123456789+00:00')`,
		`('sqlite:01HZZZ0000000000000000000C', 'issue', 'third', NULL, 'done', NULL, NULL, '["P1"]', 'jira:EXT-1', '{}', NULL, NULL, NULL, '2026-05-13T14:00:00+00:00', '2026-05-13T14:00:00+00:00')`,
	}
	for _, r := range rows {
		if _, err := db.Exec(`INSERT INTO subjects (id, kind, title, body, status, priority, assignee, labels, parent_id,
			custom_fields, native_status, status_metadata, attachments, created_at, updated_at) VALUES ` + r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMigratesRustDatabase(t *testing.T) {
	path := tempDB(t)
	makeRustDB(t, path)
	s := openStore(t, path, nil)
	if from, to := s.Versions(); from != 0 || to != len(migrations) {
		t.Fatalf("migrated %d -> %d", from, to)
	}
	ctx := context.Background()
	page, err := s.List(ctx, storage.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sub := range page.Subjects {
		ids = append(ids, sub.ID)
	}
	// ULID (creation) order, kind-qualified ids.
	want := []string{"task:01HZZZ0000000000000000000A", "task:01HZZZ0000000000000000000B", "issue:01HZZZ0000000000000000000C"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	first, second, third := page.Subjects[0], page.Subjects[1], page.Subjects[2]
	if first.CreatedAt.Time != time.Date(2026, 5, 13, 13, 55, 0, 123456789, time.UTC) || *first.Priority != 2 ||
		*first.Assignee != "alice" || !reflect.DeepEqual(first.Labels, []string{"backend", "P1"}) ||
		string(first.Custom["story_points"]) != "5" || first.Attachments[0].Kind != "document" || *first.Description != "body" {
		t.Errorf("first row: %+v", first)
	}
	if !reflect.DeepEqual(first.Children, []string{"task:01HZZZ0000000000000000000B"}) {
		t.Errorf("children %v: the parent link was not rewritten", first.Children)
	}
	if *second.Parent != "task:01HZZZ0000000000000000000A" || *second.NativeStatus != "In Review" || string(second.StatusMetadata) != `{"color":"#fff"}` {
		t.Errorf("second row: %+v", second)
	}
	if *third.Parent != "jira:EXT-1" {
		t.Errorf("a foreign parent was rewritten: %v", *third.Parent)
	}
	// Labels were indexed, so the SQL label filters see migrated rows.
	p1, err := s.List(ctx, storage.Query{Filter: model.Filter{LabelsAll: []string{"P1"}}, Limit: 10})
	if err != nil || p1.Total != 2 {
		t.Fatalf("labels_all P1 after migration: total %d, %v", p1.Total, err)
	}
	var versions []int
	r, _ := s.db.Query(`SELECT version FROM schema_version ORDER BY version`)
	for r.Next() {
		var v int
		r.Scan(&v)
		versions = append(versions, v)
	}
	r.Close()
	if !reflect.DeepEqual(versions, []int{1, 2}) {
		t.Errorf("schema_version rows %v", versions)
	}
	// Reopening is a no-op.
	s.Close()
	again := openStore(t, path, nil)
	if from, to := again.Versions(); from != to {
		t.Errorf("second open migrated %d -> %d", from, to)
	}
}

// Four stores opening one fresh file at once stand in for four plugin
// processes starting together: all succeed and the schema is built once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	path := tempDB(t)
	var wg sync.WaitGroup
	applied := make(chan bool, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(context.Background(), Options{Path: path, BusyTimeout: 10 * time.Second, AutoMigrate: true})
			if err != nil {
				t.Error(err)
				return
			}
			from, to := s.Versions()
			applied <- from == 0 && to == len(migrations)
			s.Close()
		}()
	}
	wg.Wait()
	close(applied)
	n := 0
	for a := range applied {
		if a {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d openers applied the migrations, want 1", n)
	}
}

func TestAutoMigrateOff(t *testing.T) {
	path := tempDB(t)
	makeRustDB(t, path)
	_, err := Open(context.Background(), Options{Path: path, AutoMigrate: false})
	if !errors.Is(err, ErrSchemaBehind) {
		t.Fatalf("a database behind the schema opened with auto-migration off: %v", err)
	}
	openStore(t, path, nil) // migrates
	s, err := Open(context.Background(), Options{Path: path, AutoMigrate: false})
	if err != nil {
		t.Fatalf("an up-to-date database refused with auto-migration off: %v", err)
	}
	s.Close()
}
