package subjectsqlite

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// Every error path answers the subject backend's code and data.category
// (host-and-lifecycle §11.2), says what to fix, and leaves the plugin
// serving with nothing written.
func TestErrorPaths(t *testing.T) {
	h := newProject(t, map[string]string{"ANIMUS_SQLITE_KINDS": "task,issue"}).start()
	task := create(t, h, "task/create", map[string]any{"title": "exists"})
	issue := create(t, h, "issue/create", map[string]any{"title": "an issue"})
	missing := "task:01ZZZZZZZZZZZZZZZZZZZZZZZZ"
	for _, tc := range []struct {
		name, method string
		params       any
		code         int
		category     string
		mention      string
	}{
		{"get without id", "task/get", map[string]any{}, -32602, "invalid_request", `"id"`},
		{"get with a non-string id", "task/get", map[string]any{"id": 5}, -32602, "invalid_request", "id"},
		{"get missing", "task/get", map[string]any{"id": missing}, -32602, "not_found", "not found: " + missing},
		{"get of another kind's subject", "task/get", map[string]any{"id": issue.ID}, -32602, "not_found", "not found"},
		{"bare id of another kind", "task/get", map[string]any{"id": nativeOf(issue.ID)}, -32602, "not_found", "not found"},
		{"wrong kind prefix on a real ULID", "issue/get", map[string]any{"id": "issue:" + nativeOf(task.ID)}, -32602, "not_found", "not found"},
		{"unserved id prefix", "subject/get", map[string]any{"id": "epic:" + nativeOf(task.ID)}, -32602, "not_found", "not found"},
		{"subject/get with an unserved kind", "subject/get", map[string]any{"kind": "epic", "id": task.ID}, -32602, "not_found", "not found"},
		{"unserved kind prefix method", "epic/get", map[string]any{"id": task.ID}, -32601, "method_not_found", "epic/get"},
		{"v2 router verb", "task/v2/get", map[string]any{"id": task.ID}, -32601, "method_not_found", ""},
		{"params not an object", "task/get", json.RawMessage(`[1]`), -32602, "invalid_request", "object"},
		{"create without title", "task/create", map[string]any{"description": "d"}, -32602, "invalid_request", "title"},
		{"create with blank title", "task/create", map[string]any{"title": "  "}, -32602, "invalid_request", "title"},
		{"create kind mismatch", "task/create", map[string]any{"title": "x", "kind": "issue"}, -32602, "invalid_request", "does not match"},
		{"create unserved kind", "subject/create", map[string]any{"title": "x", "kind": "epic"}, -32602, "invalid_request", "served: task, issue"},
		{"create bad status", "task/create", map[string]any{"title": "x", "status": "later"}, -32602, "invalid_request", "ready, in-progress, blocked, done, cancelled"},
		{"create bad priority", "task/create", map[string]any{"title": "x", "priority": 7}, -32602, "invalid_request", "0..4"},
		{"create bad labels", "task/create", map[string]any{"title": "x", "labels": []any{"ok", 3}}, -32602, "invalid_request", "labels"},
		{"create bad attachment", "task/create", map[string]any{"title": "x", "attachments": []map[string]any{{"id": "1"}}}, -32602, "invalid_request", "kind"},
		{"update missing", "task/update", map[string]any{"id": missing, "patch": map[string]any{"status": "done"}}, -32602, "not_found", "not found"},
		{"update bad status", "task/update", map[string]any{"id": task.ID, "patch": map[string]any{"status": "zzz"}}, -32602, "invalid_request", "accepted values"},
		{"update patch not an object", "task/update", map[string]any{"id": task.ID, "patch": []int{1}}, -32602, "invalid_request", "patch"},
		{"update empty label", "task/update", map[string]any{"id": task.ID, "patch": map[string]any{"labels_add": []string{""}}}, -32602, "invalid_request", "labels_add"},
		{"update bad custom", "task/update", map[string]any{"id": task.ID, "patch": map[string]any{"custom": "x"}}, -32602, "invalid_request", "custom"},
		{"status without status", "task/status", map[string]any{"id": task.ID}, -32602, "invalid_request", "status"},
		{"status bad value", "task/status", map[string]any{"id": task.ID, "status": "paused"}, -32602, "invalid_request", "accepted values"},
		{"delete missing", "task/delete", map[string]any{"id": missing}, -32602, "not_found", "not found"},
		{"delete another kind's subject", "task/delete", map[string]any{"id": issue.ID}, -32602, "not_found", "not found"},
		{"list bad cursor", "task/list", map[string]any{"cursor": "garbage"}, -32602, "invalid_request", "cursor"},
		{"list negative limit", "task/list", map[string]any{"limit": -1}, -32602, "invalid_request", "limit"},
		{"list bad status", "task/list", map[string]any{"filter": map[string]any{"status": []string{"nope"}}}, -32602, "invalid_request", "accepted values"},
		{"list bad updated_since", "task/list", map[string]any{"updated_since": "yesterday"}, -32602, "invalid_request", "RFC 3339"},
		{"next unserved kind", "subject/next", map[string]any{"kind": "epic"}, -32602, "invalid_request", "not served"},
		{"watch bad filter", "subject/watch", map[string]any{"filter": map[string]any{"status": "nope"}}, -32602, "invalid_request", "status"},
		{"unwatch without watch_id", "subject/unwatch", map[string]any{}, -32602, "invalid_request", "watch_id"},
		{"comments missing", "task/comments", map[string]any{"id": missing}, -32602, "not_found", "not found"},
	} {
		e := e2etest.Failure(t, h, tc.method, tc.params)
		if e.Code != tc.code || e.Category() != tc.category || !strings.Contains(e.Message, tc.mention) {
			t.Errorf("%s: got %d %q (%s), want %d %s mentioning %q", tc.name, e.Code, e.Message, e.Category(), tc.code, tc.category, tc.mention)
		}
		if strings.Contains(e.Message, "SELECT") || strings.Contains(e.Message, h.Dir()) {
			t.Errorf("%s: message leaks SQL or a path: %s", tc.name, e.Message)
		}
	}
	// Still serving, and none of the failed calls wrote anything.
	l := list(t, h, "subject/list", nil)
	if len(l.Subjects) != 2 {
		t.Fatalf("%d subjects after the failed calls, want 2", len(l.Subjects))
	}
	for _, s := range l.Subjects {
		if s.UpdatedAt != s.CreatedAt {
			t.Fatalf("%s was modified by a failed call", s.ID)
		}
	}
}

// A write that cannot get the database lock within the busy timeout
// (another program holds it) is -32603 unavailable, not a hang and not a
// generic internal error; once the lock is gone the same call succeeds.
func TestBusyDatabaseIsUnavailable(t *testing.T) {
	p := newProject(t, map[string]string{"ANIMUS_SQLITE_BUSY_TIMEOUT_MS": "50"})
	h := p.start()
	create(t, h, "task/create", map[string]any{"title": "before"})
	holder := tool(t, "hold", "-db", p.dbPath())
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); holder.Wait() })
	buf := make([]byte, 7)
	if _, err := stdout.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("holder: %q %v", buf, err)
	}
	e := e2etest.Failure(t, h, "task/create", map[string]any{"title": "during"})
	if e.Code != -32603 || e.Category() != "unavailable" || !strings.HasPrefix(e.Message, "backend unavailable:") {
		t.Fatalf("locked write: %d %q %s", e.Code, e.Message, e.Category())
	}
	if l := list(t, h, "task/list", nil); len(l.Subjects) != 1 {
		t.Fatalf("reads must go on under a writer's lock (WAL): %d subjects", len(l.Subjects))
	}
	stdin.Close()
	holder.Wait()
	create(t, h, "task/create", map[string]any{"title": "after"})
	if l := list(t, h, "task/list", nil); len(l.Subjects) != 2 {
		t.Fatalf("%d subjects, want 2 (the failed create must not have half-written)", len(l.Subjects))
	}
}
