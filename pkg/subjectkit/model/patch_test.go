package model

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

func TestPatchApply(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	now := t0.Add(time.Hour)
	review, shipped, label := "In Review", "Shipped", "code-review"
	hints := Hints{{NativeStatus: review, MapsTo: InProgress, DispatchLabel: &label}, {NativeStatus: shipped, MapsTo: Done}}
	desc, alice := "original", "alice"
	base := func() *Subject {
		return &Subject{ID: "task:1", Kind: "task", Title: "t", Description: &desc, Status: Ready, Assignee: &alice,
			Labels: []string{"a", "b"}, Custom: map[string]json.RawMessage{"keep": json.RawMessage(`1`), "drop": json.RawMessage(`2`)},
			CreatedAt: Time{t0}, UpdatedAt: Time{t0}}
	}
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name  string
		patch string
		check func(t *testing.T, n *Subject)
	}{
		{"empty patch bumps updated_at only", `{}`, func(t *testing.T, n *Subject) {
			want := base()
			want.UpdatedAt = Time{now}
			if !reflect.DeepEqual(n, want) {
				t.Errorf("got %+v", n)
			}
		}},
		{"assignee absent untouched", `{"status":"done"}`, func(t *testing.T, n *Subject) {
			if n.Assignee == nil || *n.Assignee != "alice" || n.Status != Done {
				t.Errorf("assignee %v status %s", n.Assignee, n.Status)
			}
		}},
		{"assignee null clears", `{"assignee":null}`, func(t *testing.T, n *Subject) {
			if n.Assignee != nil {
				t.Errorf("assignee %v", *n.Assignee)
			}
		}},
		{"assignee set", `{"assignee":"bob"}`, func(t *testing.T, n *Subject) {
			if *n.Assignee != "bob" {
				t.Errorf("assignee %v", *n.Assignee)
			}
		}},
		{"labels remove then add; both keeps", `{"labels_add":["c","a","b"],"labels_remove":["b","zz"]}`, func(t *testing.T, n *Subject) {
			if want := []string{"a", "c", "b"}; !reflect.DeepEqual(n.Labels, want) {
				t.Errorf("labels %v want %v", n.Labels, want)
			}
		}},
		{"labels replace before add/remove", `{"labels":["x","y"],"labels_add":["z"],"labels_remove":["x"]}`, func(t *testing.T, n *Subject) {
			if want := []string{"y", "z"}; !reflect.DeepEqual(n.Labels, want) {
				t.Errorf("labels %v", n.Labels)
			}
		}},
		{"remove all labels omits them", `{"labels_remove":["a","b"]}`, func(t *testing.T, n *Subject) {
			if len(n.Labels) != 0 {
				t.Errorf("labels %v", n.Labels)
			}
		}},
		{"custom merges; null deletes", `{"custom":{"drop":null,"new":{"b":1,"a":2}}}`, func(t *testing.T, n *Subject) {
			got, _ := rustjson.Marshal(n.Custom)
			if string(got) != `{"keep":1,"new":{"a":2,"b":1}}` {
				t.Errorf("custom %s", got)
			}
		}},
		{"comment leaves the description", `{"comment":"a note"}`, func(t *testing.T, n *Subject) {
			if *n.Description != "original" {
				t.Errorf("description %q", *n.Description)
			}
		}},
		{"CLI body sets description", `{"body":"new"}`, func(t *testing.T, n *Subject) {
			if *n.Description != "new" {
				t.Errorf("description %q", *n.Description)
			}
		}},
		{"description null clears", `{"description":null}`, func(t *testing.T, n *Subject) {
			if n.Description != nil {
				t.Errorf("description %q", *n.Description)
			}
		}},
		{"CLI string priority and title", `{"priority":"p1","title":"renamed"}`, func(t *testing.T, n *Subject) {
			if *n.Priority != 3 || n.Title != "renamed" {
				t.Errorf("priority %d title %q", *n.Priority, n.Title)
			}
		}},
		{"native status with a hint moves the status", `{"native_status":"In Review"}`, func(t *testing.T, n *Subject) {
			if n.Status != InProgress || *n.NativeStatus != review {
				t.Errorf("status %s native %v", n.Status, n.NativeStatus)
			}
		}},
		{"explicit status wins over the hint", `{"native_status":"Shipped","status":"blocked"}`, func(t *testing.T, n *Subject) {
			if n.Status != Blocked {
				t.Errorf("status %s", n.Status)
			}
		}},
		{"custom.native_status redirect", `{"custom":{"native_status":"Shipped"}}`, func(t *testing.T, n *Subject) {
			if *n.NativeStatus != shipped || n.Status != Done || n.Custom["native_status"] != nil {
				t.Errorf("native %v status %s custom %v", n.NativeStatus, n.Status, n.Custom)
			}
		}},
		{"custom.native_status non-string keeps its JSON text", `{"custom":{"native_status":5}}`, func(t *testing.T, n *Subject) {
			if *n.NativeStatus != "5" {
				t.Errorf("native %v", *n.NativeStatus)
			}
		}},
		{"attachments add, replace, remove", `{"attachments_add":[{"id":"1","kind":"document","uri":"u1","metadata":null},{"id":"2","kind":"url","uri":"u2","title":"T"}]}`, func(t *testing.T, n *Subject) {
			want := []Attachment{{ID: "1", Kind: "document", URI: "u1"}, {ID: "2", Kind: "url", URI: "u2", Title: str("T")}}
			if !reflect.DeepEqual(n.Attachments, want) {
				t.Errorf("attachments %+v", n.Attachments)
			}
		}},
		{"status_metadata set", `{"status_metadata":{"color":"#fff"}}`, func(t *testing.T, n *Subject) {
			if string(n.StatusMetadata) != `{"color":"#fff"}` {
				t.Errorf("status_metadata %s", n.StatusMetadata)
			}
		}},
		{"unknown keys ignored", `{"paused":true,"deadline":"x"}`, func(t *testing.T, n *Subject) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := DecodePatch(json.RawMessage(tc.patch))
			if err != nil {
				t.Fatal(err)
			}
			old := base()
			n := p.Apply(old, hints, now)
			if !reflect.DeepEqual(old, base()) {
				t.Fatal("Apply mutated its input")
			}
			if !n.UpdatedAt.Equal(now) {
				t.Errorf("updated_at %v", n.UpdatedAt)
			}
			tc.check(t, n)
		})
	}

	// updated_at never goes backwards.
	p, _ := DecodePatch(json.RawMessage(`{}`))
	if n := p.Apply(base(), hints, t0.Add(-time.Hour)); !n.UpdatedAt.Equal(t0) {
		t.Errorf("updated_at went back to %v", n.UpdatedAt)
	}
}

func TestDecodePatchRejects(t *testing.T) {
	for _, bad := range []string{`[]`, `{"status":"finished"}`, `{"priority":9}`, `{"labels_add":[""]}`, `{"labels_add":"x","labels_remove":[1]}`,
		`{"title":""}`, `{"title":"  "}`, `{"assignee":5}`, `{"custom":[1]}`, `{"attachments_add":[{"id":"1","kind":"k"}]}`,
		`{"attachments_add":[{"id":"1","kind":"k","uri":"u"},{"id":"1","kind":"k","uri":"v"}]}`, `{"comment":{}}`} {
		if _, err := DecodePatch(json.RawMessage(bad)); err == nil {
			t.Errorf("DecodePatch(%s) accepted", bad)
		}
	}
}

func TestClassify(t *testing.T) {
	review, todo, shipped, lab1, lab2 := "In Review", "Todo", "QA", "code-review", "qa"
	hints := Hints{{NativeStatus: review, MapsTo: InProgress, DispatchLabel: &lab1}, {NativeStatus: shipped, MapsTo: InProgress, DispatchLabel: &lab2}, {NativeStatus: todo, MapsTo: Ready}}
	base := &Subject{ID: "task:1", Status: InProgress, NativeStatus: &review, Attachments: []Attachment{{ID: "a"}}}
	with := func(f func(s *Subject)) *Subject { s := base.Clone(); f(s); return s }
	for _, tc := range []struct {
		name       string
		n          *Subject
		kind       ChangeKind
		prevNative *string
		prevLabel  *string
	}{
		{"nothing", with(func(s *Subject) {}), Updated, nil, nil},
		{"status", with(func(s *Subject) { s.Status = Done }), StatusChanged, &review, nil},
		{"status and native", with(func(s *Subject) { s.Status = Ready; s.NativeStatus = &todo }), StatusChanged, &review, &lab1},
		{"label within bucket", with(func(s *Subject) { s.NativeStatus = &shipped }), DispatchLabelChanged, &review, &lab1},
		{"attachment added", with(func(s *Subject) { s.Attachments = append(s.Attachments, Attachment{ID: "b"}) }), AttachmentAdded, nil, nil},
		{"attachment removed", with(func(s *Subject) { s.Attachments = nil }), AttachmentRemoved, nil, nil},
	} {
		ev := Classify(base, tc.n, hints)
		if ev.ChangeKind != tc.kind || !equalPtr(ev.PreviousNativeStatus, tc.prevNative) || !equalPtr(ev.PreviousDispatchLabel, tc.prevLabel) {
			t.Errorf("%s: got %s prev_native=%v prev_label=%v", tc.name, ev.ChangeKind, deref(ev.PreviousNativeStatus), deref(ev.PreviousDispatchLabel))
		}
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestDecodeDraft(t *testing.T) {
	d, err := DecodeDraft(json.RawMessage(`{"title":"T","body":"B","priority":"high","labels":["x","x","y"],"kind":"task","custom":{"k":null,"v":1},"id":"ignored"}`))
	if err != nil {
		t.Fatal(err)
	}
	s := d.Subject("task:1", "task", nil, time.Unix(0, 0))
	if s.Title != "T" || *s.Description != "B" || *s.Priority != 3 || !reflect.DeepEqual(s.Labels, []string{"x", "y"}) ||
		*d.Kind != "task" || s.Status != Ready || len(s.Custom) != 1 || s.ID != "task:1" {
		t.Fatalf("draft %+v subject %+v", d, s)
	}
	for _, bad := range []string{`{}`, `{"title":""}`, `{"title":3}`, `{"title":"t","status":"x"}`, `{"title":"t","attachments":[{}]}`} {
		if _, err := DecodeDraft(json.RawMessage(bad)); err == nil {
			t.Errorf("DecodeDraft(%s) accepted", bad)
		}
	}
}
