package logstore

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/cursor"
)

// pageAll follows next_cursor from a first query with p until a page comes
// without one, and returns the pages (ids, oldest first within a page).
func pageAll(t *testing.T, svc *Service, p QueryParams) [][]string {
	t.Helper()
	var pages [][]string
	for len(pages) < 100 {
		res := mustQuery(t, svc, p)
		pages = append(pages, ids(res.Entries))
		if res.NextCursor == "" {
			return pages
		}
		p.Cursor = sp(res.NextCursor)
	}
	t.Fatalf("no end after 100 pages: %v", pages)
	return nil
}

// wantPages is the paging contract over entries sorted by (ts, id): the
// newest limit first, then each next-older chunk, each page oldest first;
// a page is followed by a cursor exactly when it is full, so when the
// count is a multiple of limit the last page is empty.
func wantPages(sorted []string, limit int) [][]string {
	var pages [][]string
	end := len(sorted)
	for {
		start := max(0, end-limit)
		pages = append(pages, append([]string{}, sorted[start:end]...))
		if end-start < limit {
			return pages
		}
		end = start
	}
}

// TestQueryPaging pages through entries with timestamp ties at every page
// boundary, for several page sizes, through Loki alone, the buffer alone
// and both: every entry exactly once, in the documented page order.
func TestQueryPaging(t *testing.T) {
	f := newLoki(t)
	writer := New(testConfig(t, f.URL()))
	t0 := base()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var entries []map[string]any
	for _, e := range []struct {
		id string
		s  int
	}{{"a", 1}, {"b", 1}, {"c", 1}, {"d", 2}, {"e", 3}, {"f", 3}, {"g", 4}} {
		// One label set, pushed in id order: Loki then returns ties in
		// id order, which makes page contents exact.
		entries = append(entries, wireEntryOf(e.id, at(e.s), "info", "daemon", "", "daemon.page", ""))
	}
	mustStore(t, writer, entries...)
	sorted := []string{"a", "b", "c", "d", "e", "f", "g"}
	readers := []struct {
		name   string
		svc    *Service
		lagged bool
	}{
		{"loki", New(testConfig(t, f.URL())), false},
		{"buffer only", writer, true},
		{"buffer and loki", writer, false},
	}
	for _, r := range readers {
		for _, limit := range []int{1, 2, 3, 4, 7, 10} {
			t.Run(fmt.Sprintf("%s/limit %d", r.name, limit), func(t *testing.T) {
				f.CatchUp()
				if r.lagged {
					f.HideStored()
				}
				got := pageAll(t, r.svc, QueryParams{Limit: i64(int64(limit)), TargetGlob: sp("daemon.*")})
				if want := wantPages(sorted, limit); !reflect.DeepEqual(got, want) {
					t.Fatalf("pages %v, want %v", got, want)
				}
			})
		}
	}
}

// TestQueryPagingTiesAcrossStreams: when tied entries sit in different
// streams and Loki returns them in an order unrelated to their ids, paging
// still yields every matching entry exactly once, each page sorted and
// never newer than the page before it.
func TestQueryPagingTiesAcrossStreams(t *testing.T) {
	f := newLoki(t)
	t0 := base()
	levels := []string{"error", "warn", "info", "debug", "trace"}
	var entries []map[string]any
	want := map[string]bool{}
	second := map[string]int{} // id → seconds after t0
	for i := range 20 {
		id := fmt.Sprintf("id-%02d", 19-i) // arrival order opposite to id order
		lvl := levels[i%len(levels)]
		second[id] = i / 6
		entries = append(entries, wireEntryOf(id, t0.Add(time.Duration(i/6)*time.Second), lvl, "plugin", "px", "plugin.px", ""))
		if lvl != "trace" {
			want[id] = true
		}
	}
	mustStore(t, New(testConfig(t, f.URL())), entries...)
	reader := New(testConfig(t, f.URL()))
	keys := func(page []string) []string { // "<second>/<id>", sortable as text
		out := make([]string, len(page))
		for i, id := range page {
			out[i] = fmt.Sprintf("%03d/%s", second[id], id)
		}
		return out
	}
	for _, limit := range []int{1, 3, 4, 5} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			pages := pageAll(t, reader, QueryParams{Limit: i64(int64(limit)), MinLevel: sp("debug"), SourceName: sp("px")})
			seen := map[string]bool{}
			prevOldest := -1 // oldest second of the previous page
			for i, page := range pages {
				if len(page) > limit || (i < len(pages)-1 && len(page) != limit) {
					t.Fatalf("page %d has %d entries: %v", i, len(page), pages)
				}
				if !sort.StringsAreSorted(keys(page)) {
					t.Fatalf("page %d not in (ts, id) order: %v", i, page)
				}
				if len(page) > 0 {
					// Ties at a boundary may split in Loki's order, so
					// pages are ordered by timestamp only.
					if prevOldest >= 0 && second[page[len(page)-1]] > prevOldest {
						t.Fatalf("page %d is newer than the page before: %v", i, pages)
					}
					prevOldest = second[page[0]]
				}
				for _, id := range page {
					if seen[id] || !want[id] {
						t.Fatalf("%s returned twice or not matching: %v", id, pages)
					}
					seen[id] = true
				}
			}
			if len(seen) != len(want) {
				t.Fatalf("paging returned %d of %d entries: %v", len(seen), len(want), pages)
			}
		})
	}
}

// TestQueryForwardCursor: a forward cursor (the format allows both
// directions) pages from the oldest entry toward the newest, with the
// same tie handling.
func TestQueryForwardCursor(t *testing.T) {
	f := newLoki(t)
	t0 := base()
	var entries []map[string]any
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		entries = append(entries, wireEntryOf(id, t0.Add(time.Duration(i/2)*time.Second), "info", "cli", "", "cli.x", ""))
	}
	mustStore(t, New(testConfig(t, f.URL())), entries...)
	reader := New(testConfig(t, f.URL()))
	p := QueryParams{Since: sp(t0.Format(time.RFC3339Nano)), Until: sp(t0.Add(time.Minute).Format(time.RFC3339Nano)), Limit: i64(2)}
	pl, err := reader.plan(p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p.Cursor = sp(cursor.Encode(cursor.Cursor{Dir: cursor.Forward, TS: pl.start, Q: pl.hash, Start: pl.start, End: pl.end}))
	got := pageAll(t, reader, p)
	if want := [][]string{{"a", "b"}, {"c", "d"}, {"e"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("forward pages %v, want %v", got, want)
	}
}

// TestQueryCursorPinsWindow: entries stored after the first page do not
// shift later pages (the cursor pins the window and the boundary), so
// nothing is returned twice or skipped.
func TestQueryCursorPinsWindow(t *testing.T) {
	f := newLoki(t)
	writer := New(testConfig(t, f.URL()))
	t0 := base()
	for i := range 4 {
		mustStore(t, writer, wireEntryOf(fmt.Sprint("old-", i), t0.Add(time.Duration(i)*time.Second), "info", "daemon", "", "d", ""))
	}
	first := mustQuery(t, writer, QueryParams{Limit: i64(2)})
	mustStore(t, writer, wireEntryOf("newer", t0.Add(time.Minute), "info", "daemon", "", "d", ""))
	second := mustQuery(t, writer, QueryParams{Limit: i64(2), Cursor: sp(first.NextCursor)})
	got := strings.Join(append(ids(second.Entries), ids(first.Entries)...), ",")
	if got != "old-0,old-1,old-2,old-3" {
		t.Fatalf("pages read %s", got)
	}
}
