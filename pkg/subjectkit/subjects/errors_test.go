package subjects

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/storage"
)

// The accepted-values texts every status and priority error carries.
const (
	statusHelp   = "ready, in-progress, blocked, done, cancelled (aliases: in_progress, inprogress, doing, completed, complete, closed, canceled, todo, backlog, open, new)"
	priorityHelp = `an integer 0..4 (0 none, 1 low, 2 medium, 3 high, 4 critical), the same as a string ("3"), or one of none, low, medium, normal, high, critical, urgent, p0 (critical) .. p3 (low), p4 (none)`
	idHelp       = `invalid params: "id" must be a non-empty subject id such as "task:01J…"`
)

// Every bad input is -32602 invalid_request naming the field in
// data.field, with the message the host has always been sent; an id no
// kind in scope can name is not_found before anything else is read.
func TestBadInput(t *testing.T) {
	h := start(t, twoKinds)
	task := create(h, "task/create", map[string]any{"title": "exists"})
	issue := create(h, "issue/create", map[string]any{"title": "an issue"})
	missing := "task:01ZZZZZZZZZZZZZZZZZZZZZZZZ"
	notObject := json.RawMessage(`[1]`)
	for _, tc := range []struct {
		method string
		params any
		field  string // "" for not_found
		msg    string
	}{
		{"task/get", nil, "id", idHelp},
		{"task/get", map[string]any{}, "id", idHelp},
		{"task/get", map[string]any{"id": ""}, "id", idHelp},
		{"task/get", map[string]any{"id": nil}, "id", idHelp},
		{"task/get", map[string]any{"id": 5, "kind": 5}, "id", "invalid params: invalid id: expected a string, got 5"},
		{"subject/get", map[string]any{"id": task.ID, "kind": 5}, "kind", "invalid params: invalid kind: expected a string, got 5"},
		{"task/get", notObject, "params", "invalid params: invalid params: expected an object, got [1]"},
		{"task/delete", map[string]any{}, "id", idHelp},
		{"task/comments", map[string]any{"id": []int{}}, "id", "invalid params: invalid id: expected a string, got []"},
		{"task/create", nil, "title", "invalid params: title must be a non-empty string"},
		{"task/create", map[string]any{"title": " "}, "title", "invalid params: title must be a non-empty string"},
		{"task/create", map[string]any{"title": "x", "status": "finished"}, "status", `invalid params: invalid status "finished" for status: accepted values are ` + statusHelp},
		{"task/create", map[string]any{"title": "x", "priority": 9}, "priority", `invalid params: invalid priority "9": accepted values are ` + priorityHelp},
		{"task/create", map[string]any{"title": "x", "labels": []any{"ok", 3}}, "labels", `invalid params: invalid labels: expected a string or an array of strings, got ["ok",3]`},
		{"task/create", map[string]any{"title": "x", "attachments": []map[string]any{{"id": "1"}}}, "attachments", `invalid params: invalid attachments[0]: "kind" must be a non-empty string`},
		{"task/create", map[string]any{"title": "x", "kind": "issue"}, "kind", `invalid params: kind "issue" does not match the method's kind "task"`},
		{"subject/create", map[string]any{"title": "x", "kind": "epic"}, "kind", `invalid params: kind "epic" is not served by this plugin (served: task, issue)`},
		{"subject/create", map[string]any{"title": "x", "kind": 5}, "kind", "invalid params: invalid kind: expected a string, got 5"},
		{"task/update", map[string]any{"id": task.ID, "patch": notObject}, "patch", "invalid params: invalid patch: expected an object, got [1]"},
		{"task/update", map[string]any{"id": task.ID, "patch": map[string]any{"labels_add": []string{""}}}, "labels_add", "invalid params: invalid labels_add: labels must be non-empty strings"},
		{"task/update", map[string]any{"id": task.ID, "custom": "x"}, "custom", `invalid params: invalid custom: expected an object, got "x"`},
		{"task/update", map[string]any{"patch": map[string]any{"status": "zzz"}}, "id", idHelp},
		// A missing subject whose id is possible reads the patch first.
		{"task/update", map[string]any{"id": missing, "patch": map[string]any{"status": "zzz"}}, "status", `invalid params: invalid status "zzz" for status: accepted values are ` + statusHelp},
		{"task/update", map[string]any{"id": missing, "patch": map[string]any{"title": "y"}}, "", "not found: " + missing},
		{"task/update", map[string]any{"id": issue.ID, "patch": map[string]any{"status": "zzz"}}, "", "not found: " + issue.ID},
		{"subject/update", map[string]any{"id": task.ID, "kind": "issue", "patch": notObject}, "", "not found: " + task.ID},
		{"task/status", map[string]any{"id": task.ID}, "status", `invalid params: "status" is required: one of ready, in-progress, blocked, done, cancelled`},
		{"task/status", map[string]any{"id": task.ID, "status": nil}, "status", `invalid params: "status" is required: one of ready, in-progress, blocked, done, cancelled`},
		{"task/status", map[string]any{"id": task.ID, "status": 5}, "status", "invalid params: invalid status: expected a string, got 5"},
		{"task/status", map[string]any{"id": task.ID, "status": "paused"}, "status", `invalid params: invalid status "paused" for status: accepted values are ` + statusHelp},
		{"task/status", map[string]any{"id": "issue:zz"}, "", "not found: issue:zz"},
		{"task/status", map[string]any{"id": missing, "status": "done"}, "", "not found: " + missing},
		{"task/list", map[string]any{"cursor": "garbage"}, "cursor", `invalid params: cursor "garbage" was not issued by this plugin: pass a next_cursor from a previous list, or omit it`},
		{"task/list", map[string]any{"cursor": "garbage", "status": "nope"}, "status", `invalid params: invalid status "nope" for status: accepted values are ` + statusHelp},
		{"task/list", map[string]any{"limit": -1}, "limit", "invalid params: invalid limit -1: want an integer from 0 to 4294967295"},
		{"task/list", map[string]any{"updated_since": "yesterday"}, "updated_since", `invalid params: invalid updated_since "yesterday": want an RFC 3339 timestamp such as 2026-05-10T00:00:00Z`},
		{"subject/list", map[string]any{"kind": 5, "filter": map[string]any{}}, "kind", "invalid params: invalid kind: expected a string or an array of strings, got 5"},
		{"subject/list", notObject, "params", "invalid params: invalid params: expected an object, got [1]"},
		{"subject/next", map[string]any{"kind": "epic"}, "kind", `invalid params: kind "epic" is not served by this plugin (served: task, issue)`},
		{"task/next", map[string]any{"kind": 5}, "kind", "invalid params: invalid kind: expected a string, got 5"},
		{"subject/next", notObject, "params", "invalid params: invalid params: expected an object, got [1]"},
		{"task/watch", map[string]any{"filter": map[string]any{"status": "nope"}}, "status", `invalid params: invalid status "nope" for status: accepted values are ` + statusHelp},
		{"subject/watch", notObject, "params", "invalid params: invalid params: expected an object, got [1]"},
		{"subject/unwatch", map[string]any{}, "watch_id", `invalid params: "watch_id" is required: the id of the watch request, e.g. "7"`},
		{"task/unwatch", map[string]any{"watch_id": ""}, "watch_id", `invalid params: "watch_id" is required: the id of the watch request, e.g. "7"`},
		{"subject/unwatch", notObject, "params", "invalid params: invalid params: expected an object, got [1]"},
	} {
		wantCat := pluginkit.CategoryInvalidRequest
		if tc.field == "" {
			wantCat = pluginkit.CategoryNotFound
		}
		if e := h.Fails(t, tc.method, tc.params, -32602, wantCat); e.Field() != tc.field || e.Message != tc.msg {
			t.Errorf("%s %v:\n got field %q %q\nwant field %q %q", tc.method, tc.params, e.Field(), e.Message, tc.field, tc.msg)
		}
	}
	// Nothing the failed calls sent was written.
	if p := ok[page](h, "subject/list", nil); p.Total != 2 || p.Subjects[0].UpdatedAt != task.UpdatedAt {
		t.Errorf("after the failures: %+v", p)
	}
}

// A write that finds another process holding the lock past the busy
// timeout is -32603 unavailable, and succeeds once the lock is released.
func TestBusyIsUnavailable(t *testing.T) {
	sqliteOnly(t, "it holds SQLite's write lock from another connection; the PostgreSQL lock timeout is pgstore's test")
	h := start(t, map[string]string{envBusyTimeoutMS: "1"})
	s := create(h, "task/create", map[string]any{"title": "t"})
	lock := holdWriteLock(t, h.dbPath)
	for _, tc := range []struct {
		method string
		params map[string]any
	}{
		{"task/create", map[string]any{"title": "blocked"}},
		{"task/update", map[string]any{"id": s.ID, "patch": map[string]any{"title": "blocked"}}},
		{"task/status", map[string]any{"id": s.ID, "status": "done"}},
		{"task/delete", map[string]any{"id": s.ID}},
	} {
		e := h.Fails(t, tc.method, tc.params, -32603, pluginkit.CategoryUnavailable)
		if e.Message != "backend unavailable: the database stayed locked by another process past the busy timeout; retry" {
			t.Errorf("%s under a held lock: %v", tc.method, e)
		}
	}
	// Reads do not wait for the writer (WAL).
	if got := ok[model.Subject](h, "task/get", map[string]any{"id": s.ID}); got.Title != "t" {
		t.Errorf("get under a held lock: %+v", got)
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := ok[model.Subject](h, "task/update", map[string]any{"id": s.ID, "patch": map[string]any{"title": "free"}}); got.Title != "free" {
		t.Errorf("update after the lock was released: %+v", got)
	}
}

// holdWriteLock takes the database's write lock from another connection,
// as another process's writer would.
func holdWriteLock(t *testing.T, path string) *sql.Tx {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

// rpcError is the one map from a failure to what the host sees.
func TestRPCError(t *testing.T) {
	constraint := errors.Join(storage.ErrConflict, errors.New("UNIQUE constraint failed: subjects.id"))
	unavailable := &storage.UnavailableError{Reason: "the database cannot be reached; retry", Err: errors.New("dial tcp 10.0.0.1:5432: connect: connection refused")}
	passed := pluginkit.NotFound("kept as is")
	for _, tc := range []struct {
		name      string
		err       error
		code      int
		category  pluginkit.Category
		message   string
		field     string
		identical bool // the error itself is returned
	}{
		{"input with a field", &model.InputError{Field: "title", Msg: "bad title"}, -32602, pluginkit.CategoryInvalidRequest, "invalid params: bad title", "title", false},
		{"input without a field", fmt.Errorf("wrapped: %w", &model.InputError{Msg: "bad"}), -32602, pluginkit.CategoryInvalidRequest, "invalid params: bad", "", false},
		{"not found", fmt.Errorf("get: %w", storage.ErrNotFound), -32602, pluginkit.CategoryNotFound, "not found: task:1", "", false},
		{"constraint", constraint, -32602, pluginkit.CategoryInvalidRequest, "invalid params: the change conflicts with an existing subject", "", false},
		{"unavailable", fmt.Errorf("list: %w", unavailable), -32603, pluginkit.CategoryUnavailable, "backend unavailable: the database cannot be reached; retry", "", false},
		{"protocol error", passed, -32602, pluginkit.CategoryNotFound, "not found: kept as is", "", true},
		{"cancelled", context.Canceled, 0, "", "", "", true},
		{"deadline", fmt.Errorf("q: %w", context.DeadlineExceeded), 0, "", "", "", true},
		{"anything else", errors.New("disk I/O error at /secret/path"), -32603, pluginkit.CategoryInternal, "internal error", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rpcError(tc.err, "task:1")
			if tc.identical {
				if got != tc.err {
					t.Fatalf("rpcError(%v) = %v, want the error itself", tc.err, got)
				}
				return
			}
			var pe *pluginkit.Error
			if !errors.As(got, &pe) {
				t.Fatalf("rpcError(%v) = %T %v, want *pluginkit.Error", tc.err, got, got)
			}
			field, _ := pe.Data["field"].(string)
			if pe.Code != tc.code || pe.Category != tc.category || pe.Message != tc.message || field != tc.field {
				t.Errorf("rpcError(%v) = %d %s %q field %q", tc.err, pe.Code, pe.Category, pe.Message, field)
			}
			if strings.Contains(pe.Message, "/secret") {
				t.Errorf("the cause leaked onto the wire: %q", pe.Message)
			}
		})
	}
	if rpcError(nil, "x") != nil {
		t.Error("rpcError(nil) is not nil")
	}
}
