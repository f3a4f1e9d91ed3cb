package logsloki

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// TestQueryFiltersServerSide stores a mix of entries, then queries from a
// fresh process (empty read-your-writes buffer) with each filter and
// limit 1: the single matching entry is older than every non-matching
// one, so only a filter evaluated by Loki can return it.
func TestQueryFiltersServerSide(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	h := b.start(nil)
	base := time.Now().Add(-time.Minute)
	other := "someone-else"
	special := b.entry("special", base, "error", "workflow", "wf.a-b.c")
	special.Target = b.uniq + ".wf.a-b.c(x)"
	var noise []logEntry
	for i := range 6 {
		e := b.entry(fmt.Sprintf("n%d", i), base.Add(time.Duration(i+1)*time.Second), "info", "daemon", "daemon.sched.x")
		if i%2 == 1 {
			e.SourceName = &other
		}
		noise = append(noise, e)
	}
	store(t, h, append([]logEntry{special}, noise...)...)
	// Each read mode renders its own LogQL (structured metadata filters
	// with =on, | json extraction otherwise); all must select the same.
	for _, mode := range []string{"on", "auto", "off"} {
		t.Run(mode, func(t *testing.T) {
			queryFilters(t, b, b.start(map[string]string{"LOKI_STRUCTURED_METADATA": mode}), other)
		})
	}
}

func queryFilters(t *testing.T, b *backend, q *fakehost.Host, other string) {
	for _, tc := range []struct {
		name string
		q    map[string]any
		want []string
	}{
		{"min_level", map[string]any{"min_level": "warn", "target_glob": b.uniq + ".**"}, []string{"special"}},
		{"source", map[string]any{"source": "workflow", "target_glob": b.uniq + ".**"}, []string{"special"}},
		{"glob with metacharacters", map[string]any{"target_glob": b.uniq + ".wf.*.c(x)"}, []string{"special"}},
		{"glob * stops at dots", map[string]any{"target_glob": b.uniq + ".*"}, nil},
		{"source_name", map[string]any{"source_name": other, "target_glob": b.uniq + ".**", "limit": 5}, []string{"n1", "n3", "n5"}},
		{"all filters", map[string]any{"min_level": "error", "source": "workflow", "source_name": b.uniq, "target_glob": b.uniq + ".wf.**"}, []string{"special"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := map[string]any{"limit": 1}
			for k, v := range tc.q {
				params[k] = v
			}
			got := b.ids(query(t, q, params).Entries)
			if !sameList(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestQueryNewestLimitOldestFirst is the daemon's read: no cursor, limit
// n → the newest n matches in chronological order.
func TestQueryNewestLimitOldestFirst(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	h := b.start(nil)
	base := time.Now().Add(-time.Minute)
	var es []logEntry
	for i := range 10 {
		es = append(es, b.entry(fmt.Sprint(i), base.Add(time.Duration(i)*time.Second), "info", "daemon", "d"))
	}
	store(t, h, es[5:]...)
	store(t, h, es[:5]...) // arrival order must not matter
	got := b.ids(query(t, b.start(nil), map[string]any{"source_name": b.uniq, "limit": 3}).Entries)
	if !sameList(got, []string{"7", "8", "9"}) {
		t.Fatalf("got %v, want [7 8 9]", got)
	}
}

// TestQueryCursors pages through entries with same-timestamp ties: every
// entry exactly once, pages newest-first, each page oldest-first, an empty
// last page ends with no cursor, and a cursor cannot be reused with
// another filter.
func TestQueryCursors(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	h := b.start(nil)
	base := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	var es []logEntry
	var want []string
	for i := range 8 {
		ts := base.Add(time.Duration(i/4) * time.Second) // two groups of four ties
		e := b.entry(fmt.Sprintf("t%d", i), ts, "info", "daemon", "c")
		es = append(es, e)
		want = append(want, e.ID)
	}
	store(t, h, es...)
	q := b.start(nil)
	filter := map[string]any{"source_name": b.uniq, "limit": 3}
	var seen []string
	var cursors []string
	for page := 0; ; page++ {
		if page > 10 {
			t.Fatal("pagination does not end")
		}
		params := map[string]any{}
		for k, v := range filter {
			params[k] = v
		}
		if len(cursors) > 0 {
			params["cursor"] = cursors[len(cursors)-1]
		}
		res := query(t, q, params)
		for i := 1; i < len(res.Entries); i++ {
			if res.Entries[i-1].TS > res.Entries[i].TS {
				t.Fatalf("page %d not oldest-first: %v", page, b.ids(res.Entries))
			}
		}
		for _, e := range res.Entries {
			seen = append(seen, e.ID)
		}
		if res.NextCursor == nil {
			if len(res.Entries) == 3 {
				t.Fatal("a full page came without next_cursor")
			}
			break
		}
		if len(res.Entries) != 3 {
			t.Fatalf("page %d has %d entries and a cursor", page, len(res.Entries))
		}
		cursors = append(cursors, *res.NextCursor)
	}
	sort.Strings(seen)
	sort.Strings(want)
	if !sameList(seen, want) {
		t.Fatalf("pages returned %v, want each of %v once", seen, want)
	}

	t.Run("empty last page", func(t *testing.T) {
		res := query(t, q, map[string]any{"source_name": b.uniq, "limit": 4})
		if len(res.Entries) != 4 || res.NextCursor == nil {
			t.Fatalf("page 1: %d entries, cursor %v", len(res.Entries), res.NextCursor)
		}
		res = query(t, q, map[string]any{"source_name": b.uniq, "limit": 4, "cursor": *res.NextCursor})
		if len(res.Entries) != 4 || res.NextCursor == nil {
			t.Fatalf("page 2: %d entries, cursor %v", len(res.Entries), res.NextCursor)
		}
		res = query(t, q, map[string]any{"source_name": b.uniq, "limit": 4, "cursor": *res.NextCursor})
		if len(res.Entries) != 0 || res.NextCursor != nil {
			t.Fatalf("page 3: %d entries, cursor %v; want empty and none", len(res.Entries), res.NextCursor)
		}
	})
	t.Run("cursor with another filter", func(t *testing.T) {
		e := e2etest.Failure(t, q, "log_storage/query", map[string]any{"source_name": b.uniq, "min_level": "warn", "limit": 3, "cursor": cursors[0]})
		wantErr(t, e, -32602, "invalid_request", "different filter")
	})
	t.Run("garbage cursor", func(t *testing.T) {
		e := e2etest.Failure(t, q, "log_storage/query", map[string]any{"cursor": "not-a-cursor"})
		wantErr(t, e, -32602, "not_found", "not found: cursor")
	})
}

// TestQueryWindow: since > until is -32602 without calling Loki; an
// explicit window longer than LOKI_MAX_QUERY_WINDOW is -32602; an
// open-ended one is clamped to the window.
func TestQueryWindow(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	h := b.start(map[string]string{"LOKI_MAX_QUERY_WINDOW": "1h"})
	now := time.Now()
	store(t, h, b.entry("old", now.Add(-90*time.Minute), "info", "daemon", "w"), b.entry("new", now.Add(-30*time.Minute), "info", "daemon", "w"))

	e := e2etest.Failure(t, h, "log_storage/query", map[string]any{"since": now.Format(time.RFC3339), "until": now.Add(-time.Hour).Format(time.RFC3339)})
	wantErr(t, e, -32602, "invalid_request", "since")
	e = e2etest.Failure(t, h, "log_storage/query", map[string]any{"since": now.Add(-2 * time.Hour).Format(time.RFC3339), "until": now.Format(time.RFC3339)})
	wantErr(t, e, -32602, "invalid_request", "LOKI_MAX_QUERY_WINDOW")
	got := b.ids(query(t, b.start(map[string]string{"LOKI_MAX_QUERY_WINDOW": "1h"}),
		map[string]any{"source_name": b.uniq, "since": now.Add(-2 * time.Hour).Format(time.RFC3339Nano)}).Entries)
	if !sameList(got, []string{"new"}) {
		t.Fatalf("clamped window returned %v, want [new]", got)
	}
	// The same query in a process with the default window sees both.
	got = b.ids(query(t, b.start(nil), map[string]any{"source_name": b.uniq, "since": now.Add(-2 * time.Hour).Format(time.RFC3339Nano)}).Entries)
	if !sameList(got, []string{"old", "new"}) {
		t.Fatalf("default window returned %v, want [old new]", got)
	}
}

// TestQueryDedupByID: two Loki entries with the same id (a writer that
// retried with a new timestamp) come back once.
func TestQueryDedupByID(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	h := b.start(nil)
	now := time.Now().Add(-time.Minute)
	first := b.entry("dup", now, "info", "daemon", "d")
	second := first
	second.TS = now.Add(time.Second).UTC().Format(time.RFC3339Nano)
	second.Message = "resent"
	store(t, h, first)
	store(t, h, second)
	if b.fake != nil && b.fake.Entries("fake") != 2 {
		t.Fatalf("Loki holds %d entries, want 2 distinct lines", b.fake.Entries("fake"))
	}
	for _, proc := range []string{"same process", "fresh process"} {
		qh := h
		if proc == "fresh process" {
			qh = b.start(nil)
		}
		got := query(t, qh, map[string]any{"source_name": b.uniq})
		if len(got.Entries) != 1 {
			raw, _ := json.Marshal(got.Entries)
			t.Fatalf("%s: %d entries, want 1: %s", proc, len(got.Entries), raw)
		}
	}
}

// TestReadYourWrites: with Loki's ingestion lagging, a query right after a
// store sees the entry in the storing process (buffer) but not in a fresh
// one, which proves the buffer is what makes it visible.
func TestReadYourWrites(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	b.needFake("SetIngestionLag")
	h := b.start(nil)
	b.fake.SetIngestionLag(time.Minute)
	store(t, h, b.entry("fresh", time.Now(), "info", "plugin", "ryw"))
	if got := b.ids(query(t, h, map[string]any{"source_name": b.uniq, "limit": 200}).Entries); !sameList(got, []string{"fresh"}) {
		t.Fatalf("storing process: %v, want [fresh]", got)
	}
	if got := query(t, b.start(nil), map[string]any{"source_name": b.uniq}).Entries; len(got) != 0 {
		t.Fatalf("fresh process saw %d entries through a lagging Loki; the test proves nothing", len(got))
	}
}
