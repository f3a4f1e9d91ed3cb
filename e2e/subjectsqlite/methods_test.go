package subjectsqlite

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

var hintsEnv = `[{"native_status":"In Review","maps_to":"in-progress","dispatch_label":"code-review","description":"Awaiting review"},` +
	`{"native_status":"QA","maps_to":"in-progress","dispatch_label":"qa"},{"native_status":"Shipped","maps_to":"done"}]`

// create returns a bare Subject; get returns the same bytes; a subject
// created with only a title has exactly the v0.1.0 keys (no null, no
// v0.1.1 field, no empty array).
func TestCreateGetRoundTrip(t *testing.T) {
	h := newProject(t, nil).start()
	raw := e2etest.Call(t, h, "task/create", map[string]any{"title": "plain"})
	var keys map[string]json.RawMessage
	json.Unmarshal(raw, &keys)
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"created_at", "id", "kind", "status", "title", "updated_at"}; !slices.Equal(got, want) {
		t.Fatalf("default subject keys %v, want %v: %s", got, want, raw)
	}
	if !bytes.HasPrefix(raw, []byte(`{"id":"task:`)) || !bytes.Contains(raw, []byte(`"kind":"task","title":"plain","status":"ready","created_at":"`)) {
		t.Fatalf("field order or values differ from v0.1.0: %s", raw)
	}
	s := e2etest.Decode[subject](t, raw)
	if len(nativeOf(s.ID)) != 26 || s.CreatedAt != s.UpdatedAt || !strings.HasSuffix(s.CreatedAt, "Z") {
		t.Fatalf("id %q created %s updated %s", s.ID, s.CreatedAt, s.UpdatedAt)
	}
	if again := e2etest.Call(t, h, "task/get", map[string]string{"id": s.ID}); !bytes.Equal(again, raw) {
		t.Fatalf("get differs from create:\n%s\n%s", again, raw)
	}

	full := e2etest.Call(t, h, "task/create", map[string]any{
		"title": "full <b>&", "body": "text", "status": "in_progress", "priority": "critical", "labels": []string{"x", "y", "x"},
		"assignee": "agent:default", "custom": map[string]any{"points": 5, "gone": nil}, "native_status": "Doing",
		"status_metadata": map[string]any{"color": "#FFAA00"}, "url": "https://example.test/1",
		"attachments": []map[string]any{{"id": "doc-7", "kind": "document", "uri": "file:///spec.md", "mime_type": "text/markdown"}},
		"id":          "task:CALLER", "created_at": "2000-01-01T00:00:00Z",
	})
	f := e2etest.Decode[subject](t, full)
	if f.Title != "full <b>&" || *f.Description != "text" || f.Status != "in-progress" || *f.Priority != 4 ||
		!slices.Equal(f.Labels, []string{"x", "y"}) || *f.Assignee != "agent:default" || string(f.Custom["points"]) != "5" ||
		len(f.Custom) != 1 || *f.NativeStatus != "Doing" || string(f.StatusMetadata) != `{"color":"#FFAA00"}` ||
		*f.URL != "https://example.test/1" || len(f.Attachments) != 1 || f.ID == "task:CALLER" || strings.HasPrefix(f.CreatedAt, "2000") {
		t.Fatalf("full create: %s", full)
	}
	if !bytes.Contains(full, []byte(`"title":"full <b>&"`)) {
		t.Fatalf("HTML characters were escaped: %s", full)
	}
	if again := e2etest.Call(t, h, "subject/get", map[string]string{"id": f.ID}); !bytes.Equal(again, full) {
		t.Fatalf("subject/get differs from create:\n%s\n%s", again, full)
	}
}

// Ids: kind-qualified, bare and legacy sqlite: forms resolve; kinds come
// from the method, params.kind, or the first configured kind.
func TestIDsAndKinds(t *testing.T) {
	h := newProject(t, map[string]string{"ANIMUS_SQLITE_KINDS": "task,issue"}).start()
	task := create(t, h, "task/create", map[string]any{"title": "a task", "kind": "task"})
	issue := create(t, h, "issue/create", map[string]any{"title": "an issue"})
	first := create(t, h, "subject/create", map[string]any{"title": "default kind"})
	named := create(t, h, "subject/create", map[string]any{"title": "named kind", "kind": "issue"})
	for s, want := range map[*subject]string{&task: "task", &issue: "issue", &first: "task", &named: "issue"} {
		if s.Kind != want || !strings.HasPrefix(s.ID, want+":") {
			t.Errorf("%q: kind %s id %s, want kind %s", s.Title, s.Kind, s.ID, want)
		}
	}
	native := nativeOf(task.ID)
	for _, tc := range []struct{ method, id string }{
		{"task/get", task.ID}, {"task/get", native}, {"task/get", "sqlite:" + native},
		{"subject/get", task.ID}, {"subject/get", native}, {"subject/get", "sqlite:" + native},
	} {
		if got := create(t, h, tc.method, map[string]string{"id": tc.id}); got.ID != task.ID {
			t.Errorf("%s %s -> %s", tc.method, tc.id, got.ID)
		}
	}
	// The runner's {kind, id:<bare>} shape.
	if got := create(t, h, "subject/get", map[string]string{"kind": "task", "id": native}); got.ID != task.ID {
		t.Errorf("subject/get {kind, bare id} -> %s", got.ID)
	}
}

func TestListShapesFiltersAndPaging(t *testing.T) {
	h := newProject(t, map[string]string{"ANIMUS_SQLITE_KINDS": "task,issue", "ANIMUS_SQLITE_DISPATCH_HINTS": hintsEnv}).start()
	mk := func(method string, p map[string]any) string { return create(t, h, method, p).ID }
	a := mk("task/create", map[string]any{"title": "a", "labels": []string{"backend", "p1"}, "assignee": "alice"})
	b := mk("task/create", map[string]any{"title": "b", "labels": []string{"backend"}, "status": "blocked", "native_status": "In Review"})
	c := mk("task/create", map[string]any{"title": "c", "labels": []string{"p1"}, "assignee": "bob", "native_status": "QA",
		"attachments": []map[string]any{{"id": "1", "kind": "document", "uri": "u"}}})
	d := mk("issue/create", map[string]any{"title": "d", "labels": []string{"backend", "p1"}})
	e := mk("task/create", map[string]any{"title": "e", "native_status": "Shipped"})
	since := create(t, h, "task/get", map[string]string{"id": c}).UpdatedAt

	for _, tc := range []struct {
		name   string
		method string
		params any
		want   []string
	}{
		{"no params", "task/list", nil, []string{a, b, c, e}},
		{"bare empty", "task/list", map[string]any{}, []string{a, b, c, e}},
		{"subject/list all kinds", "subject/list", map[string]any{}, []string{a, b, c, d, e}},
		{"bare status", "task/list", map[string]any{"status": []string{"blocked"}}, []string{b}},
		{"wrapped status", "task/list", map[string]any{"filter": map[string]any{"status": []string{"blocked"}}}, []string{b}},
		{"CLI status alias", "task/list", map[string]any{"status": []string{"todo"}}, []string{a}},
		{"native status with a hint maps the status", "task/list", map[string]any{"status": []string{"in-progress"}}, []string{c}},
		{"kind/list with other kinds too", "task/list", map[string]any{"filter": map[string]any{"kind": []string{"task", "issue"}}}, []string{a, b, c, e}},
		{"kind/list for another kind only", "task/list", map[string]any{"filter": map[string]any{"kind": []string{"issue"}}}, nil},
		{"subject/list kind", "subject/list", map[string]any{"kind": []string{"issue"}}, []string{d}},
		{"subject/list kind string", "subject/list", map[string]any{"kind": "issue"}, []string{d}},
		{"watch-style top-level kind", "subject/list", map[string]any{"kind": "issue", "filter": map[string]any{}}, []string{d}},
		{"subject/list unserved kind", "subject/list", map[string]any{"kind": []string{"epic"}}, nil},
		{"labels_any", "subject/list", map[string]any{"labels_any": []string{"p1", "nope"}}, []string{a, c, d}},
		{"labels_all", "subject/list", map[string]any{"labels_all": []string{"backend", "p1"}}, []string{a, d}},
		{"assignee", "task/list", map[string]any{"assignee": []string{"bob", "carol"}}, []string{c}},
		{"native_status", "task/list", map[string]any{"native_status": "In Review"}, []string{b}},
		{"dispatch_label", "task/list", map[string]any{"dispatch_label": "qa"}, []string{c}},
		{"dispatch_label unknown", "task/list", map[string]any{"dispatch_label": "nothing"}, nil},
		{"has_attachment_kind", "task/list", map[string]any{"has_attachment_kind": "document"}, []string{c}},
		{"updated_since", "subject/list", map[string]any{"updated_since": since}, []string{c, d, e}},
		{"AND", "subject/list", map[string]any{"labels_any": []string{"backend"}, "status": []string{"ready"}}, []string{a, d}},
	} {
		l := list(t, h, tc.method, tc.params)
		if got := ids(l); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
		if l.Total == nil || *l.Total != len(tc.want) || l.NextCursor != nil || l.Subjects == nil {
			t.Errorf("%s: total %v next_cursor %v subjects %v", tc.name, l.Total, l.NextCursor, l.Subjects)
		}
	}

	// Keyset paging: full pages, an opaque cursor, none on the last page,
	// and a row inserted meanwhile lands on a later page, not twice.
	var seen []string
	params := map[string]any{"limit": 2}
	for page := 0; ; page++ {
		l := list(t, h, "subject/list", params)
		seen = append(seen, ids(l)...)
		if l.NextCursor == nil {
			if len(l.Subjects) == 0 || *l.Total != 6 {
				t.Fatalf("last page %v total %v", ids(l), *l.Total)
			}
			break
		}
		if len(l.Subjects) != 2 {
			t.Fatalf("page %d has %d subjects with more to come", page, len(l.Subjects))
		}
		if page == 0 {
			mk("task/create", map[string]any{"title": "late"})
		}
		params = map[string]any{"limit": 2, "cursor": *l.NextCursor}
	}
	uniq := slices.Compact(slices.Sorted(slices.Values(seen)))
	if len(seen) != 6 || len(uniq) != 6 || seen[0] != a {
		t.Fatalf("paged %v: want 6 distinct subjects in order", seen)
	}
	// The wrapped shape carries the cursor inside filter.
	first := list(t, h, "subject/list", map[string]any{"filter": map[string]any{"limit": 1}})
	second := list(t, h, "subject/list", map[string]any{"filter": map[string]any{"limit": 1, "cursor": *first.NextCursor}})
	if len(second.Subjects) != 1 || second.Subjects[0].ID != b {
		t.Fatalf("wrapped cursor: %v", ids(second))
	}
	// limit 0 is "everything" (the CLI's --limit 0).
	if l := list(t, h, "subject/list", map[string]any{"limit": 0}); len(l.Subjects) != 6 || l.NextCursor != nil {
		t.Fatalf("limit 0: %d subjects", len(l.Subjects))
	}
	raw := e2etest.Call(t, h, "subject/list", map[string]any{"status": []string{"done"}, "limit": 1})
	if bytes.Contains(raw, []byte("next_cursor")) || bytes.Contains(raw, []byte("null")) {
		t.Fatalf("final page mentions next_cursor or null: %s", raw)
	}
}

func TestUpdateSemantics(t *testing.T) {
	h := newProject(t, map[string]string{"ANIMUS_SQLITE_DISPATCH_HINTS": hintsEnv}).start()
	s := create(t, h, "task/create", map[string]any{"title": "t", "description": "original", "assignee": "alice",
		"labels": []string{"a", "b"}, "custom": map[string]any{"keep": 1, "drop": 2}})
	upd := func(params map[string]any) subject {
		t.Helper()
		params["id"] = s.ID
		return create(t, h, "task/update", params)
	}
	for _, tc := range []struct {
		name  string
		patch map[string]any
		check func(n subject) bool
	}{
		{"absent assignee untouched", map[string]any{"patch": map[string]any{"status": "blocked"}},
			func(n subject) bool { return n.Status == "blocked" && *n.Assignee == "alice" }},
		{"assignee null clears", map[string]any{"patch": map[string]any{"assignee": nil}}, func(n subject) bool { return n.Assignee == nil }},
		{"labels add/remove", map[string]any{"patch": map[string]any{"labels_add": []string{"c", "a"}, "labels_remove": []string{"b"}}},
			func(n subject) bool { return slices.Equal(n.Labels, []string{"a", "c"}) }},
		{"custom merge, null deletes", map[string]any{"patch": map[string]any{"custom": map[string]any{"drop": nil, "new": "v"}}},
			func(n subject) bool {
				return len(n.Custom) == 2 && string(n.Custom["keep"]) == "1" && string(n.Custom["new"]) == `"v"`
			}},
		{"comment keeps the description", map[string]any{"patch": map[string]any{"comment": "ran once"}},
			func(n subject) bool { return *n.Description == "original" }},
		{"CLI keys: string priority, labels replace, body", map[string]any{"patch": map[string]any{"priority": "high", "labels": []string{"z"}, "body": "new body"}},
			func(n subject) bool {
				return *n.Priority == 3 && slices.Equal(n.Labels, []string{"z"}) && *n.Description == "new body"
			}},
		{"top-level fields without patch", map[string]any{"title": "renamed", "status": "done"},
			func(n subject) bool { return n.Title == "renamed" && n.Status == "done" }},
		{"custom.native_status redirect with hint", map[string]any{"patch": map[string]any{"custom": map[string]any{"native_status": "In Review"}}},
			func(n subject) bool {
				return *n.NativeStatus == "In Review" && n.Status == "in-progress" && n.Custom["native_status"] == nil
			}},
		{"attachments extension", map[string]any{"patch": map[string]any{"attachments_add": []map[string]any{{"id": "1", "kind": "url", "uri": "https://x"}}}},
			func(n subject) bool { return len(n.Attachments) == 1 }},
		{"empty patch", map[string]any{"patch": map[string]any{}}, func(n subject) bool { return n.Title == "renamed" }},
	} {
		before := create(t, h, "task/get", map[string]string{"id": s.ID})
		n := upd(tc.patch)
		if !tc.check(n) {
			t.Errorf("%s: %+v", tc.name, n)
		}
		if n.UpdatedAt < before.UpdatedAt || n.CreatedAt != s.CreatedAt || n.ID != s.ID {
			t.Errorf("%s: timestamps or id moved wrongly: %+v", tc.name, n)
		}
		if got := create(t, h, "task/get", map[string]string{"id": s.ID}); !reflect.DeepEqual(got, n) {
			t.Errorf("%s: get differs from the update result", tc.name)
		}
	}
	comments := e2etest.Decode[struct {
		Comments []struct{ Body string } `json:"comments"`
	}](t, e2etest.Call(t, h, "task/comments", map[string]string{"id": s.ID}))
	if len(comments.Comments) != 1 || comments.Comments[0].Body != "ran once" {
		t.Fatalf("comment log %+v", comments)
	}
}

func TestStatusNextDeleteSchema(t *testing.T) {
	h := newProject(t, map[string]string{"ANIMUS_SQLITE_KINDS": "task,issue", "ANIMUS_SQLITE_DISPATCH_HINTS": hintsEnv}).start()
	if raw := e2etest.Call(t, h, "task/next", nil); string(raw) != "null" {
		t.Fatalf("next on an empty store: %s", raw)
	}
	low := create(t, h, "task/create", map[string]any{"title": "low", "priority": 1})
	high := create(t, h, "task/create", map[string]any{"title": "high", "priority": "p0"})
	create(t, h, "task/create", map[string]any{"title": "later high", "priority": 4})
	create(t, h, "issue/create", map[string]any{"title": "issue", "priority": 4})
	if n := create(t, h, "task/next", map[string]any{}); n.ID != high.ID {
		t.Fatalf("next = %s, want the oldest highest-priority %s", n.Title, high.Title)
	}
	if n := create(t, h, "subject/next", map[string]any{"kind": "issue"}); n.Kind != "issue" {
		t.Fatalf("subject/next {kind: issue} = %+v", n)
	}
	st := create(t, h, "task/status", map[string]string{"id": high.ID, "status": "in_progress"})
	if st.Status != "in-progress" {
		t.Fatalf("status: %+v", st)
	}
	if n := create(t, h, "task/next", nil); n.Title != "later high" {
		t.Fatalf("next after status change = %s", n.Title)
	}
	if raw := e2etest.Call(t, h, "task/delete", map[string]string{"id": low.ID}); string(raw) != `{"ok":true}` {
		t.Fatalf("delete: %s", raw)
	}
	if e := e2etest.Failure(t, h, "task/get", map[string]string{"id": low.ID}); e.Category() != "not_found" {
		t.Fatalf("get after delete: %+v", e)
	}
	schema := e2etest.Call(t, h, "subject/schema", nil)
	var sc struct {
		Kinds              []string          `json:"kinds"`
		StatusValues       []string          `json:"status_values"`
		SupportsWatch      bool              `json:"supports_watch"`
		SupportsCreate     bool              `json:"supports_create"`
		SupportsPagination bool              `json:"supports_pagination"`
		SupportsDelete     bool              `json:"supports_delete"`
		NativeStatusValues []string          `json:"native_status_values"`
		Hints              []json.RawMessage `json:"status_dispatch_hints"`
		CustomFields       json.RawMessage   `json:"custom_fields"`
	}
	json.Unmarshal(schema, &sc)
	if !slices.Equal(sc.Kinds, []string{"task", "issue"}) || len(sc.StatusValues) != 5 || !sc.SupportsWatch || !sc.SupportsCreate ||
		!sc.SupportsPagination || !sc.SupportsDelete || !slices.Equal(sc.NativeStatusValues, []string{"In Review", "QA", "Shipped"}) ||
		len(sc.Hints) != 3 || sc.CustomFields != nil {
		t.Fatalf("schema: %s", schema)
	}
	if kindSchema := e2etest.Call(t, h, "issue/schema", nil); !bytes.Equal(kindSchema, schema) {
		t.Fatalf("issue/schema differs: %s", kindSchema)
	}
}

// Parent links are stored canonically whatever id form the caller used,
// and children are computed.
func TestParentsAndChildren(t *testing.T) {
	h := newProject(t, nil).start()
	epic := create(t, h, "task/create", map[string]any{"title": "epic"})
	c1 := create(t, h, "task/create", map[string]any{"title": "c1", "parent": nativeOf(epic.ID)})
	c2 := create(t, h, "task/create", map[string]any{"title": "c2"})
	c2 = create(t, h, "task/update", map[string]any{"id": c2.ID, "patch": map[string]any{"parent": "sqlite:" + nativeOf(epic.ID)}})
	ext := create(t, h, "task/create", map[string]any{"title": "ext", "parent": "jira:PROJ-1"})
	if *c1.Parent != epic.ID || *c2.Parent != epic.ID || *ext.Parent != "jira:PROJ-1" {
		t.Fatalf("parents %v %v %v", *c1.Parent, *c2.Parent, *ext.Parent)
	}
	if got := create(t, h, "task/get", map[string]string{"id": epic.ID}); !slices.Equal(got.Children, []string{c1.ID, c2.ID}) {
		t.Fatalf("children %v", got.Children)
	}
}
