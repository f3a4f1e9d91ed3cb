package subjects

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, seq := range []int64{0, 1, 99, 1 << 40} {
		got, err := decodeCursor(encodeCursor(seq))
		if err != nil || got != seq {
			t.Errorf("cursor %d -> %d, %v", seq, got, err)
		}
	}
	for _, bad := range []string{"x", "eDE" /* "x1" */, encodeCursor(5) + "!", "cy0x" /* "s-1" */} {
		if _, err := decodeCursor(bad); err == nil {
			t.Errorf("decodeCursor(%q) accepted", bad)
		}
	}
}

func TestWatchKey(t *testing.T) {
	for raw, want := range map[string]string{`7`: "7", `"7"`: "7", `"abc"`: "abc", ` 12 `: "12"} {
		if got := watchKey(json.RawMessage(raw)); got != want {
			t.Errorf("watchKey(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestIDRefs(t *testing.T) {
	sub := &model.Subject{ID: "task:01A", Kind: "task"}
	for _, tc := range []struct {
		id       string
		kinds    []string
		possible bool
		visible  bool
	}{
		{"task:01A", []string{"task"}, true, true},
		{"01A", []string{"task"}, true, true},
		{"sqlite:01A", []string{"task"}, true, true},
		{"issue:01A", []string{"task", "issue"}, true, false}, // right ULID, wrong kind
		{"task:01A", []string{"issue"}, false, false},
		{"other:01A", []string{"task"}, false, false},
		{"task:", []string{"task"}, false, true},
	} {
		r := parseRef(tc.id)
		if r.possibleIn(tc.kinds) != tc.possible || r.visibleIn(tc.kinds)(sub) != (tc.visible && slices.Contains(tc.kinds, "task")) {
			t.Errorf("%s in %v: possible=%v visible=%v", tc.id, tc.kinds, r.possibleIn(tc.kinds), r.visibleIn(tc.kinds)(sub))
		}
	}
}

func TestFilterKinds(t *testing.T) {
	app := New(Options{Rules: Rules{Kinds: []string{"task", "issue", "bug"}}})
	for _, tc := range []struct {
		kind string
		f    model.Filter
		want []string
	}{
		{"task", model.Filter{}, []string{"task"}},
		{"task", model.Filter{Kind: []string{"task", "issue"}}, []string{"task"}},
		{"task", model.Filter{Kind: []string{"issue"}}, nil},
		{"", model.Filter{}, []string{"task", "issue", "bug"}},
		{"", model.Filter{Kind: []string{"bug", "nope"}}, []string{"bug"}},
		{"", model.Filter{Kind: []string{"bug", "task"}, ScopeKinds: []string{"task"}}, []string{"task"}},
		{"", model.Filter{Kind: []string{"nope"}}, nil},
	} {
		got := scope{app, tc.kind}.filterKinds(tc.f)
		if len(got) == 0 {
			got = nil
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q/list with %+v: kinds %v, want %v", tc.kind, tc.f, got, tc.want)
		}
	}
}
