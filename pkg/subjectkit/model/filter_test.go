package model

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestDecodeFilterParamsShapes(t *testing.T) {
	since := time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)
	native, label, att := "In Review", "code-review", "document"
	full := Filter{
		Status: []Status{Ready, InProgress}, Kind: []string{"task"}, Assignee: []string{"alice"},
		LabelsAny: []string{"a"}, LabelsAll: []string{"b", "c"}, UpdatedSince: &since, Cursor: "c1", Limit: 50,
		NativeStatus: &native, DispatchLabel: &label, HasAttachmentKind: &att,
	}
	body := `{"status":["ready","in_progress"],"kind":["task"],"assignee":["alice"],"labels_any":["a"],"labels_all":["b","c"],` +
		`"updated_since":"2026-05-10T02:00:00+02:00","cursor":"c1","limit":50,"native_status":"In Review",` +
		`"dispatch_label":"code-review","has_attachment_kind":"document","unknown":true}`
	scoped := full
	scoped.ScopeKinds = []string{"task"}
	for _, tc := range []struct {
		name, raw string
		want      Filter
	}{
		{"absent", ``, Filter{}},
		{"null", `null`, Filter{}},
		{"empty", `{}`, Filter{}},
		{"bare", body, full},
		{"wrapped", `{"filter":` + body + `}`, full},
		{"watch shape", `{"kind":"task","filter":` + body + `}`, scoped},
		{"kind as string", `{"kind":"task"}`, Filter{Kind: []string{"task"}}},
		{"status as string", `{"status":"todo"}`, Filter{Status: []Status{Ready}}},
		{"nulls are absent", `{"status":null,"cursor":null,"limit":null,"native_status":null,"filter":null}`, Filter{}},
		{"limit zero", `{"limit":0}`, Filter{}},
	} {
		got, err := DecodeFilterParams(json.RawMessage(tc.raw))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"status":["nope"]}`, `{"limit":-1}`, `{"limit":1.5}`, `{"limit":"5"}`,
		`{"kind":5}`, `{"updated_since":"yesterday"}`, `{"filter":{"labels_any":{}}}`, `{"native_status":3}`} {
		if _, err := DecodeFilterParams(json.RawMessage(bad)); err == nil {
			t.Errorf("DecodeFilterParams(%s) accepted", bad)
		}
	}
}

func TestFilterMatch(t *testing.T) {
	at := time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)
	review, label := "In Review", "code-review"
	alice := "alice"
	hints := Hints{{NativeStatus: review, MapsTo: InProgress, DispatchLabel: &label}}
	s := &Subject{Kind: "task", Status: InProgress, Assignee: &alice, Labels: []string{"a", "b"}, NativeStatus: &review,
		UpdatedAt: Time{at}, Attachments: []Attachment{{ID: "1", Kind: "document", URI: "u"}}}
	other, doc, url := "other", "document", "url"
	before, after := at.Add(-time.Second), at.Add(time.Second)
	for _, tc := range []struct {
		name string
		f    Filter
		want bool
	}{
		{"empty", Filter{}, true},
		{"kind", Filter{Kind: []string{"issue", "task"}}, true},
		{"kind miss", Filter{Kind: []string{"issue"}}, false},
		{"scope miss", Filter{ScopeKinds: []string{"issue"}}, false},
		{"status", Filter{Status: []Status{InProgress}}, true},
		{"status miss", Filter{Status: []Status{Ready}}, false},
		{"assignee", Filter{Assignee: []string{"bob", "alice"}}, true},
		{"assignee miss", Filter{Assignee: []string{"bob"}}, false},
		{"labels_any", Filter{LabelsAny: []string{"z", "b"}}, true},
		{"labels_any miss", Filter{LabelsAny: []string{"z"}}, false},
		{"labels_all", Filter{LabelsAll: []string{"a", "b"}}, true},
		{"labels_all miss", Filter{LabelsAll: []string{"a", "z"}}, false},
		{"updated_since equal", Filter{UpdatedSince: &at}, true},
		{"updated_since before", Filter{UpdatedSince: &before}, true},
		{"updated_since after", Filter{UpdatedSince: &after}, false},
		{"native", Filter{NativeStatus: &review}, true},
		{"native miss", Filter{NativeStatus: &other}, false},
		{"dispatch label", Filter{DispatchLabel: &label}, true},
		{"dispatch label miss", Filter{DispatchLabel: &other}, false},
		{"attachment", Filter{HasAttachmentKind: &doc}, true},
		{"attachment miss", Filter{HasAttachmentKind: &url}, false},
		{"AND", Filter{Status: []Status{InProgress}, LabelsAny: []string{"z"}}, false},
	} {
		if got := tc.f.Match(s, hints); got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
	}
	bare := &Subject{Kind: "task", Status: Ready, UpdatedAt: Time{at}}
	if (&Filter{Assignee: []string{"alice"}}).Match(bare, hints) || (&Filter{DispatchLabel: &label}).Match(bare, hints) {
		t.Error("a subject without assignee/native status matched an assignee or dispatch_label filter")
	}
}
