package logstore

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
)

// filterFixture stores one entry of each kind through a writer process
// and returns the writer and the fixture's first timestamp. Targets
// include dashes and regex metacharacters, which a glob takes literally.
func filterFixture(t *testing.T, f *fakeloki.Server) (*Service, time.Time) {
	t.Helper()
	t0 := base()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	writer := New(testConfig(t, f.URL()))
	mustStore(t, writer,
		wireEntryOf("d1", at(1), "info", "daemon", "", "daemon.scheduler.dispatch", `{"seq":1}`),
		wireEntryOf("d2", at(2), "warn", "daemon", "", "daemon.scheduler", ""),
		wireEntryOf("p1", at(3), "error", "plugin", "animus-subject-linear", "plugin.animus-subject-linear.client", ""),
		wireEntryOf("p2", at(4), "debug", "plugin", "animus-subject-linear", "plugin.animus-subject-linear.client.http", ""),
		wireEntryOf("w1", at(5), "trace", "workflow", "wf-1", "workflow.phase", ""),
		wireEntryOf("c1", at(6), "info", "cli", "", "cli.run(x)+[y]", ""),
		wireEntryOf("d3", at(7), "error", "daemon", "", "daemon.events.task-created", ""),
	)
	return writer, t0
}

// TestQueryFilters runs every LogQuery filter, alone and combined, against
// three readers that must agree: another process (Loki evaluates the LogQL,
// in each structured-metadata mode), the writer while Loki's ingestion lags
// (only the read-your-writes buffer, evaluated in Go, can answer), and the
// writer once Loki caught up (both, deduplicated by id).
func TestQueryFilters(t *testing.T) {
	f := newLoki(t)
	writer, t0 := filterFixture(t, f)
	ts := func(s int) *string { return sp(t0.Add(time.Duration(s) * time.Second).Format(time.RFC3339Nano)) }
	all := []string{"d1", "d2", "p1", "p2", "w1", "c1", "d3"}
	cases := []struct {
		name string
		p    QueryParams
		want []string
	}{
		{"no filter, oldest first", QueryParams{}, all},
		{"min_level trace is everything", QueryParams{MinLevel: sp("trace")}, all},
		{"min_level warn", QueryParams{MinLevel: sp("warn")}, []string{"d2", "p1", "d3"}},
		{"min_level error", QueryParams{MinLevel: sp("error")}, []string{"p1", "d3"}},
		{"source", QueryParams{Source: sp("plugin")}, []string{"p1", "p2"}},
		{"source_name", QueryParams{SourceName: sp("animus-subject-linear")}, []string{"p1", "p2"}},
		{"source_name matching nothing", QueryParams{SourceName: sp("animus")}, nil},
		{"* stays within a segment", QueryParams{TargetGlob: sp("daemon.*")}, []string{"d2"}},
		{"* after a full prefix", QueryParams{TargetGlob: sp("daemon.scheduler.*")}, []string{"d1"}},
		{"** crosses segments", QueryParams{TargetGlob: sp("daemon.**")}, []string{"d1", "d2", "d3"}},
		{"* in the middle", QueryParams{TargetGlob: sp("plugin.*.client")}, []string{"p1"}},
		{"** in the middle", QueryParams{TargetGlob: sp("plugin.**.http")}, []string{"p2"}},
		{"* within a segment", QueryParams{TargetGlob: sp("daemon.events.task-*")}, []string{"d3"}},
		{"exact target", QueryParams{TargetGlob: sp("workflow.phase")}, []string{"w1"}},
		{"regex metacharacters are literal", QueryParams{TargetGlob: sp("cli.run(x)+[y]")}, []string{"c1"}},
		{"a glob matches the whole target", QueryParams{TargetGlob: sp("cli.run(x)")}, nil},
		{"** alone", QueryParams{TargetGlob: sp("**")}, all},
		{"since inclusive, until exclusive", QueryParams{Since: ts(3), Until: ts(5)}, []string{"p1", "p2"}},
		{"since only", QueryParams{Since: ts(6)}, []string{"c1", "d3"}},
		{"until only", QueryParams{Until: ts(2)}, []string{"d1"}},
		{"since equals until", QueryParams{Since: ts(3), Until: ts(3)}, nil},
		{"all filters together", QueryParams{MinLevel: sp("warn"), Source: sp("daemon"), TargetGlob: sp("daemon.**"), Since: ts(2), Until: ts(8)}, []string{"d2", "d3"}},
		{"source and source_name disagreeing", QueryParams{Source: sp("daemon"), SourceName: sp("wf-1")}, nil},
		{"limit keeps the newest", QueryParams{Limit: i64(2)}, []string{"c1", "d3"}},
		{"limit with a filter", QueryParams{MinLevel: sp("warn"), Limit: i64(1)}, []string{"d3"}},
		{"limit 0", QueryParams{Limit: i64(0)}, nil},
	}
	readers := []struct {
		name   string
		svc    *Service
		lagged bool
	}{
		{"loki, structured metadata", New(testConfig(t, f.URL(), config.EnvStructuredMeta, "on")), false},
		{"loki, json parser", New(testConfig(t, f.URL(), config.EnvStructuredMeta, "off")), false},
		{"loki, auto", New(testConfig(t, f.URL())), false},
		{"buffer only", writer, true},
		{"buffer and loki", writer, false},
	}
	for _, r := range readers {
		t.Run(r.name, func(t *testing.T) {
			f.CatchUp()
			if r.lagged {
				f.HideStored()
			}
			for _, c := range cases {
				got := mustQuery(t, r.svc, c.p)
				if g := ids(got.Entries); !(len(g) == 0 && len(c.want) == 0) && !reflect.DeepEqual(g, c.want) {
					t.Errorf("%s: got %v, want %v", c.name, g, c.want)
				}
				if got.Entries == nil {
					t.Errorf("%s: entries is null, want an array", c.name)
				}
			}
		})
	}
}

// TestQueryReturnsEntriesIntact: an entry reads back exactly as it was
// stored (nested fields, multi-line message, source_name, nanoseconds),
// whichever path answers.
func TestQueryReturnsEntriesIntact(t *testing.T) {
	f := newLoki(t)
	writer := New(testConfig(t, f.URL()))
	in := wireEntryOf("x", base().Add(987654321), "warn", "workflow", "wf-9", "workflow.step", `{"a":{"b":[1,"two",null]},"c":"<&>"}`)
	in["message"] = "line one\nline \"two\" \u00e9"
	mustStore(t, writer, in)
	for name, svc := range map[string]*Service{"writer": writer, "reader": New(testConfig(t, f.URL()))} {
		got := mustQuery(t, svc, QueryParams{})
		if len(got.Entries) != 1 || !sameJSON(t, got.Entries[0], in) {
			t.Errorf("%s: read back %s\nstored %s", name, marshal(t, got.Entries), marshal(t, in))
		}
	}
}

// TestQueryForeignLines: lines another program wrote into the plugin's
// streams are returned as valid entries rebuilt from labels and metadata,
// never failing or dropping the batch (one bad entry makes the daemon
// discard all of them).
func TestQueryForeignLines(t *testing.T) {
	f := newLoki(t)
	t0 := base()
	pushForeign(t, f, map[string][]fakeloki.Entry{
		`{service_name="animus", source="daemon", level="error"}`: {{TS: t0, Line: "panic: runtime error",
			SM: map[string]string{"animus_id": "foreign-1", "target": "daemon.crash"}}},
		`{service_name="animus", source="nope", level="fatal"}`: {{TS: t0.Add(1), Line: `{"not":"an entry"}`}},
		`{service_name="other"}`:                                {{TS: t0.Add(2), Line: "another service"}},
	})
	got := mustQuery(t, New(testConfig(t, f.URL(), config.EnvStructuredMeta, "on")), QueryParams{})
	if len(got.Entries) != 2 {
		t.Fatalf("entries %+v", got.Entries)
	}
	a, b := got.Entries[0], got.Entries[1]
	if a.ID != "foreign-1" || a.Level != "error" || a.Source != "daemon" || a.Target != "daemon.crash" || a.Message != "panic: runtime error" {
		t.Errorf("rebuilt %+v", a)
	}
	if b.Level != "info" || b.Source != "plugin" || b.Target != "loki" || b.Message != `{"not":"an entry"}` || b.ID == "" {
		t.Errorf("rebuilt %+v", b)
	}
	for _, e := range got.Entries {
		if _, err := parseEntry(json.RawMessage(marshal(t, e))); err != nil {
			t.Errorf("%s is not a valid LogEntry: %v", marshal(t, e), err)
		}
	}
	// Filters apply to rebuilt entries too.
	got = mustQuery(t, New(testConfig(t, f.URL(), config.EnvStructuredMeta, "on")), QueryParams{TargetGlob: sp("daemon.*")})
	if !reflect.DeepEqual(ids(got.Entries), []string{"foreign-1"}) {
		t.Fatalf("target filter over foreign lines: %v", ids(got.Entries))
	}
}
