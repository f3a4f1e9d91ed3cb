package subjects

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/subjectkit/model"
)

// page is list's result as the host reads it.
type page struct {
	Subjects   []model.Subject `json:"subjects"`
	NextCursor *string         `json:"next_cursor"`
	FetchedAt  string          `json:"fetched_at"`
	Total      int64           `json:"total"`
}

func titles(p page) []string {
	out := make([]string, len(p.Subjects))
	for i, s := range p.Subjects {
		out[i] = s.Title
	}
	return out
}

func TestListFilters(t *testing.T) {
	h := start(t, twoKinds)
	create(h, "task/create", map[string]any{"title": "a", "assignee": "alice", "labels": []string{"x", "y"}, "priority": 1})
	create(h, "task/create", map[string]any{"title": "b", "native_status": "In Review", "labels": "y",
		"attachments": []map[string]any{{"id": "1", "kind": "document", "uri": "file:///b"}}})
	c := create(h, "task/create", map[string]any{"title": "c", "assignee": "bob", "labels": []string{"z"}})
	create(h, "issue/create", map[string]any{"title": "d", "labels": []string{"x"}})
	c = ok[model.Subject](h, "task/status", map[string]any{"id": c.ID, "status": "done"})
	since := c.UpdatedAt.Format(time.RFC3339Nano)

	for _, tc := range []struct {
		method string
		params any
		want   []string
	}{
		{"task/list", nil, []string{"a", "b", "c"}},
		{"subject/list", nil, []string{"a", "b", "c", "d"}},
		{"issue/list", map[string]any{}, []string{"d"}},
		{"task/list", map[string]any{"status": "ready"}, []string{"a"}},
		{"subject/list", map[string]any{"filter": map[string]any{"status": []string{"ready"}}}, []string{"a", "d"}},
		{"task/list", map[string]any{"status": []string{"todo", "doing"}}, []string{"a", "b"}},
		{"task/list", map[string]any{"assignee": "alice"}, []string{"a"}},
		{"task/list", map[string]any{"assignee": []string{"alice", "bob"}}, []string{"a", "c"}},
		{"subject/list", map[string]any{"labels_any": []string{"x", "z"}}, []string{"a", "c", "d"}},
		{"task/list", map[string]any{"labels_all": []string{"x", "y"}}, []string{"a"}},
		{"task/list", map[string]any{"native_status": "In Review"}, []string{"b"}},
		{"task/list", map[string]any{"filter": map[string]any{"dispatch_label": "code-review"}}, []string{"b"}},
		{"task/list", map[string]any{"has_attachment_kind": "document"}, []string{"b"}},
		{"task/list", map[string]any{"updated_since": since}, []string{"c"}},
		{"subject/list", map[string]any{"status": "ready", "labels_any": "x"}, []string{"a", "d"}},
		// Kind scope (subject.md §7 A4): <kind>/list sees its kind only,
		// and nothing when filter.kind names other kinds only.
		{"task/list", map[string]any{"kind": "issue"}, nil},
		{"task/list", map[string]any{"filter": map[string]any{"kind": []string{"task", "issue"}}}, []string{"a", "b", "c"}},
		{"subject/list", map[string]any{"kind": "issue"}, []string{"d"}},
		{"subject/list", map[string]any{"kind": "task", "filter": map[string]any{"kind": []string{"task", "issue"}}}, []string{"a", "b", "c"}},
		{"subject/list", map[string]any{"kind": "epic"}, nil},
		{"subject/list", map[string]any{"filter": map[string]any{"kind": "epic"}}, nil},
	} {
		var p page
		res := h.OK(t, tc.method, tc.params, &p)
		if got := titles(p); !slices.Equal(got, tc.want) || p.Total != int64(len(tc.want)) || p.NextCursor != nil {
			t.Errorf("%s %v: %v total %d cursor %v, want %v", tc.method, tc.params, got, p.Total, p.NextCursor, tc.want)
		}
		// An empty page is [], never null, and fetched_at is a real instant.
		if len(tc.want) == 0 && !strings.Contains(string(res), `"subjects":[]`) {
			t.Errorf("%s %v: empty page %s", tc.method, tc.params, res)
		}
		if at, err := time.Parse(time.RFC3339Nano, p.FetchedAt); err != nil || at.Before(c.UpdatedAt.Time) {
			t.Errorf("%s: fetched_at %q", tc.method, p.FetchedAt)
		}
	}
}

// Pages are full, keyset cursors stay exact while others insert, and the
// total counts every match whatever the cursor.
func TestListPagination(t *testing.T) {
	h := start(t, nil)
	var all []string
	for _, title := range strings.Split("1 2 3 4 5 6 7", " ") {
		all = append(all, create(h, "task/create", map[string]any{"title": title}).Title)
	}

	p := ok[page](h, "task/list", map[string]any{"limit": 3})
	if !slices.Equal(titles(p), all[:3]) || p.NextCursor == nil || p.Total != 7 {
		t.Fatalf("first page %v cursor %v total %d", titles(p), p.NextCursor, p.Total)
	}
	got := titles(p)
	// A subject created mid-listing comes after the cursor: no duplicate,
	// no gap, and the total follows.
	all = append(all, create(h, "task/create", map[string]any{"title": "8"}).Title)
	var sizes []int
	for p.NextCursor != nil && len(sizes) < len(all) { // bounded: a cursor that never advances must fail, not hang
		// The daemon's wrapped shape carries the cursor inside the filter.
		p = ok[page](h, "task/list", map[string]any{"filter": map[string]any{"limit": 3, "cursor": *p.NextCursor}})
		got = append(got, titles(p)...)
		sizes = append(sizes, len(p.Subjects))
		if p.Total != 8 {
			t.Errorf("total %d mid-listing, want 8", p.Total)
		}
	}
	if !slices.Equal(got, all) || !slices.Equal(sizes, []int{3, 2}) {
		t.Errorf("paged %v in pages of %v, want %v in 3, 2", got, sizes, all)
	}

	for _, tc := range []struct {
		params     map[string]any
		n          int
		wantCursor bool
	}{
		{map[string]any{"limit": 0}, 8, false}, // 0 = absent = everything
		{map[string]any{}, 8, false},
		{map[string]any{"limit": 8}, 8, false},
		{map[string]any{"limit": 7}, 7, true},
		{map[string]any{"limit": 1, "status": "ready"}, 1, true},
		{map[string]any{"limit": 5000}, 8, false},
	} {
		p := ok[page](h, "task/list", tc.params)
		if len(p.Subjects) != tc.n || (p.NextCursor != nil) != tc.wantCursor {
			t.Errorf("list %v: %d subjects, cursor %v; want %d, cursor %v", tc.params, len(p.Subjects), p.NextCursor, tc.n, tc.wantCursor)
		}
	}
}
