package subjects

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// twoKinds serves task and issue, with one dispatch hint.
var twoKinds = map[string]string{
	envKinds:         "task,issue",
	envDispatchHints: `[{"native_status":"In Review","maps_to":"in-progress","dispatch_label":"code-review"}]`,
}

func ptrTo[T any](v T) *T { return &v }

func TestCreate(t *testing.T) {
	h := start(t, twoKinds)
	before := time.Now().Add(-time.Second)
	for _, tc := range []struct {
		name, method string
		params       map[string]any
		check        func(t *testing.T, s model.Subject)
	}{
		{"CLI shape", "task/create", map[string]any{"title": "Ship", "body": "Cut it", "priority": "high", "labels": []string{"rel", "be", "rel"}},
			func(t *testing.T, s model.Subject) {
				want := model.Subject{ID: s.ID, Kind: "task", Title: "Ship", Description: ptrTo("Cut it"), Status: model.Ready,
					Priority: ptrTo(3), Labels: []string{"rel", "be"}, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
				if !strings.HasPrefix(s.ID, "task:") || !equalJSON(s, want) {
					t.Errorf("got %+v, want %+v", s, want)
				}
			}},
		{"status alias", "task/create", map[string]any{"title": "x", "status": "doing"}, wantStatus(model.InProgress)},
		{"hinted native status moves the status", "task/create", map[string]any{"title": "x", "native_status": "In Review"},
			func(t *testing.T, s model.Subject) {
				if s.Status != model.InProgress || s.NativeStatus == nil || *s.NativeStatus != "In Review" {
					t.Errorf("status %s native %v", s.Status, s.NativeStatus)
				}
			}},
		{"explicit status beats the hint", "task/create", map[string]any{"title": "x", "native_status": "In Review", "status": "blocked"}, wantStatus(model.Blocked)},
		{"subject/create takes the first kind", "subject/create", map[string]any{"title": "x"}, wantKind("task")},
		{"subject/create with a kind", "subject/create", map[string]any{"title": "x", "kind": "issue"}, wantKind("issue")},
		{"kind-prefixed create with its own kind", "issue/create", map[string]any{"title": "x", "kind": "issue"}, wantKind("issue")},
		{"custom is normalized and nulls dropped", "task/create", map[string]any{"title": "x", "custom": map[string]any{"b": json.RawMessage(`{"y":1,"x":2.50}`), "gone": nil}},
			func(t *testing.T, s model.Subject) {
				if got, _ := json.Marshal(s.Custom); string(got) != `{"b":{"x":2.50,"y":1}}` {
					t.Errorf("custom %s", got)
				}
			}},
		{"caller ids and timestamps are ignored", "task/create", map[string]any{"title": "x", "id": "task:01AAAAAAAAAAAAAAAAAAAAAAAA", "created_at": "2000-01-01T00:00:00Z"},
			func(t *testing.T, s model.Subject) {
				if s.ID == "task:01AAAAAAAAAAAAAAAAAAAAAAAA" || s.CreatedAt.Before(before) || !s.UpdatedAt.Equal(s.CreatedAt.Time) {
					t.Errorf("id %s created %v updated %v", s.ID, s.CreatedAt, s.UpdatedAt)
				}
			}},
		{"attachments, url, assignee, status_metadata", "task/create", map[string]any{"title": "x", "url": "https://x", "assignee": "bob",
			"status_metadata": map[string]any{"b": 1, "a": "<&>"},
			"attachments":     []map[string]any{{"id": "d1", "kind": "document", "uri": "file:///spec.md", "metadata": map[string]any{"z": 1, "a": 2}}}},
			func(t *testing.T, s model.Subject) {
				meta, _ := json.Marshal(s.Attachments)
				if *s.URL != "https://x" || *s.Assignee != "bob" || string(s.StatusMetadata) != `{"a":"<&>","b":1}` ||
					string(meta) != `[{"id":"d1","kind":"document","uri":"file:///spec.md","metadata":{"a":2,"z":1}}]` {
					t.Errorf("url %v assignee %v status_metadata %s attachments %s", s.URL, s.Assignee, s.StatusMetadata, meta)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s model.Subject
			res := h.OK(t, tc.method, tc.params, &s)
			tc.check(t, s)
			// get returns exactly what create did, byte for byte.
			if got := h.OK(t, "subject/get", map[string]any{"id": s.ID}, nil); string(got) != string(res) {
				t.Errorf("get %s\ncreate %s", got, res)
			}
		})
	}
}

func wantStatus(want model.Status) func(*testing.T, model.Subject) {
	return func(t *testing.T, s model.Subject) {
		if s.Status != want {
			t.Errorf("status %s, want %s", s.Status, want)
		}
	}
}

func wantKind(want string) func(*testing.T, model.Subject) {
	return func(t *testing.T, s model.Subject) {
		if s.Kind != want || !strings.HasPrefix(s.ID, want+":") {
			t.Errorf("kind %s id %s, want kind %s", s.Kind, s.ID, want)
		}
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// A parent naming one of our subjects, in any id form, is stored by its
// canonical id so that the parent lists its children; another backend's
// id is kept as given.
func TestParentIsCanonical(t *testing.T) {
	h := start(t, nil)
	parent := create(h, "task/create", map[string]any{"title": "parent"})
	var children []string
	for _, tc := range []struct{ given, want string }{
		{parent.ID, parent.ID},
		{nativeOf(parent.ID), parent.ID},
		{"sqlite:" + nativeOf(parent.ID), parent.ID},
		{"jira:PROJ-1", "jira:PROJ-1"},
	} {
		c := create(h, "task/create", map[string]any{"title": "child", "parent": tc.given})
		if c.Parent == nil || *c.Parent != tc.want {
			t.Errorf("parent %q stored as %v, want %q", tc.given, c.Parent, tc.want)
		}
		if tc.want == parent.ID {
			children = append(children, c.ID)
		}
	}
	moved := create(h, "task/create", map[string]any{"title": "adopted"})
	moved = ok[model.Subject](h, "task/update", map[string]any{"id": moved.ID, "patch": map[string]any{"parent": nativeOf(parent.ID)}})
	children = append(children, moved.ID)
	got := ok[model.Subject](h, "task/get", map[string]any{"id": parent.ID})
	if !slices.Equal(got.Children, children) {
		t.Errorf("children %v, want %v", got.Children, children)
	}
}

func TestUpdate(t *testing.T) {
	h := start(t, twoKinds)
	for _, tc := range []struct {
		name   string
		params map[string]any // without id
		check  func(t *testing.T, s model.Subject)
	}{
		{"labels_add and labels_remove", map[string]any{"patch": map[string]any{"labels_add": []string{"c", "a"}, "labels_remove": []string{"b"}}},
			wantLabels("a", "c")},
		{"a label removed and added stays", map[string]any{"patch": map[string]any{"labels_add": []string{"a"}, "labels_remove": []string{"a"}}},
			wantLabels("b", "a")},
		{"labels replaces the set", map[string]any{"patch": map[string]any{"labels": []string{"x", "x", "y"}}}, wantLabels("x", "y")},
		{"null assignee clears", map[string]any{"patch": map[string]any{"assignee": nil}}, func(t *testing.T, s model.Subject) {
			if s.Assignee != nil || *s.Description != "d" {
				t.Errorf("assignee %v description %v", s.Assignee, s.Description)
			}
		}},
		{"custom merges, null deletes", map[string]any{"patch": map[string]any{"custom": map[string]any{"drop": nil, "new": "v"}}},
			func(t *testing.T, s model.Subject) {
				if got, _ := json.Marshal(s.Custom); string(got) != `{"keep":1,"new":"v"}` {
					t.Errorf("custom %s", got)
				}
			}},
		{"top-level fields are the patch", map[string]any{"title": "renamed", "priority": "low"}, func(t *testing.T, s model.Subject) {
			if s.Title != "renamed" || *s.Priority != 1 || *s.Assignee != "alice" {
				t.Errorf("title %q priority %v assignee %v", s.Title, s.Priority, s.Assignee)
			}
		}},
		{"null patch falls back to top-level fields", map[string]any{"patch": nil, "body": "b2"}, func(t *testing.T, s model.Subject) {
			if *s.Description != "b2" {
				t.Errorf("description %v", *s.Description)
			}
		}},
		{"hinted native status", map[string]any{"patch": map[string]any{"native_status": "In Review"}}, wantStatus(model.InProgress)},
		{"custom.native_status is the native status", map[string]any{"patch": map[string]any{"custom": map[string]any{"native_status": "In Review"}}},
			func(t *testing.T, s model.Subject) {
				if s.NativeStatus == nil || *s.NativeStatus != "In Review" || s.Custom["native_status"] != nil || s.Status != model.InProgress {
					t.Errorf("native %v custom %v status %s", s.NativeStatus, s.Custom, s.Status)
				}
			}},
		{"status_metadata keys are sorted", map[string]any{"patch": map[string]any{"status_metadata": map[string]any{"b": 1, "a": 2}}},
			func(t *testing.T, s model.Subject) {
				if string(s.StatusMetadata) != `{"a":2,"b":1}` {
					t.Errorf("status_metadata %s", s.StatusMetadata)
				}
			}},
		{"attachments added then removed", map[string]any{"patch": map[string]any{
			"attachments_add":    []map[string]any{{"id": "a1", "kind": "url", "uri": "u1"}, {"id": "a2", "kind": "url", "uri": "u2"}},
			"attachments_remove": []string{"a1"}}},
			func(t *testing.T, s model.Subject) {
				if len(s.Attachments) != 2 || s.Attachments[0].ID != "a1" || s.Attachments[1].ID != "a2" {
					t.Errorf("attachments %+v (add wins over remove within one patch)", s.Attachments)
				}
			}},
		{"a comment leaves the description alone", map[string]any{"patch": map[string]any{"comment": "note"}}, func(t *testing.T, s model.Subject) {
			if *s.Description != "d" || s.UpdatedAt.Before(s.CreatedAt.Time) {
				t.Errorf("description %v updated %v created %v", *s.Description, s.UpdatedAt, s.CreatedAt)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer h.use(t)()
			base := create(h, "task/create", map[string]any{"title": "t", "description": "d", "assignee": "alice", "priority": 2,
				"labels": []string{"a", "b"}, "custom": map[string]any{"keep": 1, "drop": 2}})
			params := map[string]any{"id": base.ID}
			for k, v := range tc.params {
				params[k] = v
			}
			got := ok[model.Subject](h, "task/update", params)
			tc.check(t, got)
			if again := ok[model.Subject](h, "task/get", map[string]any{"id": base.ID}); !equalJSON(again, got) {
				t.Errorf("get after update %+v, update returned %+v", again, got)
			}
		})
	}
}

func wantLabels(want ...string) func(*testing.T, model.Subject) {
	return func(t *testing.T, s model.Subject) {
		if !slices.Equal(s.Labels, want) {
			t.Errorf("labels %v, want %v", s.Labels, want)
		}
	}
}

func TestStatus(t *testing.T) {
	h := start(t, twoKinds)
	task := create(h, "task/create", map[string]any{"title": "t"})
	issue := create(h, "issue/create", map[string]any{"title": "i"})
	for _, tc := range []struct {
		method, id, status string
		wantID             string
		want               model.Status
	}{
		{"task/status", task.ID, "in_progress", task.ID, model.InProgress},
		{"task/status", task.ID, "inprogress", task.ID, model.InProgress},
		{"task/status", task.ID, "Blocked", task.ID, model.Blocked},
		{"task/status", task.ID, "completed", task.ID, model.Done},
		{"task/status", task.ID, "closed", task.ID, model.Done},
		{"task/status", task.ID, "canceled", task.ID, model.Cancelled},
		{"task/status", task.ID, "backlog", task.ID, model.Ready},
		{"issue/status", issue.ID, "complete", issue.ID, model.Done},
		{"subject/status", issue.ID, "open", issue.ID, model.Ready},
		{"subject/status", nativeOf(task.ID), "new", task.ID, model.Ready},
	} {
		got := ok[model.Subject](h, tc.method, map[string]any{"id": tc.id, "status": tc.status})
		if got.Status != tc.want || got.ID != tc.wantID {
			t.Errorf("%s %s %q: %s %s, want %s %s", tc.method, tc.id, tc.status, got.ID, got.Status, tc.wantID, tc.want)
		}
	}
}

// Ids are found in every accepted form, and never as a subject of a kind
// the method or the "kind" param does not cover.
func TestIDForms(t *testing.T) {
	h := start(t, twoKinds)
	task := create(h, "task/create", map[string]any{"title": "t"})
	issue := create(h, "issue/create", map[string]any{"title": "i"})
	for _, tc := range []struct {
		method string
		params map[string]any
		want   string // subject id, or "" for not_found
	}{
		{"task/get", map[string]any{"id": task.ID}, task.ID},
		{"task/get", map[string]any{"id": nativeOf(task.ID)}, task.ID},
		{"task/get", map[string]any{"id": "sqlite:" + nativeOf(task.ID)}, task.ID},
		{"subject/get", map[string]any{"id": issue.ID}, issue.ID},
		{"subject/get", map[string]any{"id": issue.ID, "kind": "issue"}, issue.ID},
		{"subject/get", map[string]any{"id": issue.ID, "kind": "task"}, ""},
		{"subject/get", map[string]any{"id": task.ID, "kind": "epic"}, ""},
		{"task/get", map[string]any{"id": issue.ID}, ""},
		{"task/get", map[string]any{"id": "task:" + nativeOf(issue.ID)}, ""},
		{"issue/get", map[string]any{"id": nativeOf(task.ID)}, ""},
		{"task/get", map[string]any{"id": "epic:" + nativeOf(task.ID)}, ""},
		{"task/get", map[string]any{"id": "task:"}, ""},
		{"task/get", map[string]any{"id": "task:01ZZZZZZZZZZZZZZZZZZZZZZZZ"}, ""},
	} {
		if tc.want != "" {
			if s := ok[model.Subject](h, tc.method, tc.params); s.ID != tc.want {
				t.Errorf("%s %v: %s, want %s", tc.method, tc.params, s.ID, tc.want)
			}
		} else if e := h.Fails(t, tc.method, tc.params, -32602, pluginkit.CategoryNotFound); e.Message != "not found: "+tc.params["id"].(string) {
			t.Errorf("%s %v: %q, want not_found naming the id", tc.method, tc.params, e.Message)
		}
	}
}

func TestNext(t *testing.T) {
	h := start(t, twoKinds)
	mk := func(method, title string, prio any, status string) string {
		p := map[string]any{"title": title, "status": status}
		if prio != nil {
			p["priority"] = prio
		}
		return create(h, method, p).ID
	}
	mk("task/create", "low", 1, "ready")
	high := mk("task/create", "high, oldest", 3, "ready")
	mk("task/create", "critical but done", 4, "done")
	mk("task/create", "none", nil, "ready")
	mk("task/create", "high, newer", 3, "ready")
	critical := mk("issue/create", "critical issue", "critical", "ready")
	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"task/next", nil, high},
		{"task/next", map[string]any{"kind": "issue"}, high}, // <kind>/next is its kind
		{"subject/next", nil, critical},
		{"subject/next", map[string]any{"kind": "task"}, high},
		{"issue/next", map[string]any{}, critical},
	} {
		if got := ok[model.Subject](h, tc.method, tc.params); got.ID != tc.want {
			t.Errorf("%s %v = %s %q, want %s", tc.method, tc.params, got.ID, got.Title, tc.want)
		}
	}
	ok[okResult](h, "issue/delete", map[string]any{"id": critical})
	if res := h.OK(t, "issue/next", nil, nil); string(res) != "null" {
		t.Errorf("issue/next with no ready issue: %s, want null", res)
	}
}

func TestDelete(t *testing.T) {
	h := start(t, twoKinds)
	task := create(h, "task/create", map[string]any{"title": "t"})
	issue := create(h, "issue/create", map[string]any{"title": "i"})
	h.Fails(t, "task/delete", map[string]any{"id": issue.ID}, -32602, pluginkit.CategoryNotFound) // an issue
	if res := h.OK(t, "task/delete", map[string]any{"id": task.ID}, nil); string(res) != `{"ok":true}` {
		t.Errorf("task/delete: %s, want {\"ok\":true}", res)
	}
	h.Fails(t, "subject/delete", map[string]any{"id": task.ID}, -32602, pluginkit.CategoryNotFound) // again
	if e := h.Fails(t, "task/get", map[string]any{"id": task.ID}, -32602, pluginkit.CategoryNotFound); e.Message != "not found: "+task.ID {
		t.Errorf("get after delete: %v", e)
	}
	if got := ok[model.Subject](h, "issue/get", map[string]any{"id": issue.ID}); got.ID != issue.ID {
		t.Errorf("the issue went with the task: %+v", got)
	}
}

func TestComments(t *testing.T) {
	h := start(t, nil)
	s := create(h, "task/create", map[string]any{"title": "t"})
	quiet := create(h, "task/create", map[string]any{"title": "no comments"})
	for _, body := range []string{"first <b>", "second"} {
		ok[model.Subject](h, "task/update", map[string]any{"id": s.ID, "patch": map[string]any{"comment": body}})
	}
	type comments struct {
		Comments []struct {
			Seq       int64  `json:"seq"`
			Body      string `json:"body"`
			CreatedAt string `json:"created_at"`
		} `json:"comments"`
	}
	got := ok[comments](h, "subject/comments", map[string]any{"id": nativeOf(s.ID)})
	if len(got.Comments) != 2 || got.Comments[0].Body != "first <b>" || got.Comments[1].Body != "second" ||
		got.Comments[0].Seq >= got.Comments[1].Seq {
		t.Errorf("comments %+v", got)
	}
	latest := ok[model.Subject](h, "task/get", map[string]any{"id": s.ID})
	if at, err := time.Parse(time.RFC3339Nano, got.Comments[1].CreatedAt); err != nil || !at.Equal(latest.UpdatedAt.Time) {
		t.Errorf("comment time %s, subject updated_at %v", got.Comments[1].CreatedAt, latest.UpdatedAt)
	}
	if res := h.OK(t, "task/comments", map[string]any{"id": quiet.ID}, nil); string(res) != `{"comments":[]}` {
		t.Errorf("no comments: %s", res)
	}
}
