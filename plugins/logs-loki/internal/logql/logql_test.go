package logql

import (
	"fmt"
	"regexp"
	"testing"
)

var opts = Options{ServiceName: "animus"}

// TestQueryGolden covers every combination of the four filters in both
// modes: 16 × 2 queries, each compared with its exact expected text.
func TestQueryGolden(t *testing.T) {
	const (
		sel     = `{service_name="animus"}`
		selSrc  = `{service_name="animus", source="daemon"}`
		selLvl  = `{service_name="animus", level=~` + "`warn|error`" + `}`
		selBoth = `{service_name="animus", source="daemon", level=~` + "`warn|error`" + `}`
		sn      = ` | source_name="sched"`
		tg      = ` | target=~` + "`^daemon\\.[^.]*$`"
	)
	f := func(lvl, src, name, glob string) Filter { return Filter{lvl, src, name, glob} }
	cases := []struct {
		f          Filter
		sm, parser string
	}{
		{f("", "", "", ""), sel, sel},
		{f("warn", "", "", ""), selLvl, selLvl},
		{f("", "daemon", "", ""), selSrc, selSrc},
		{f("warn", "daemon", "", ""), selBoth, selBoth},
		{f("", "", "sched", ""), sel + sn, sel + ` | json source_name="source_name"` + sn},
		{f("warn", "", "sched", ""), selLvl + sn, selLvl + ` | json source_name="source_name"` + sn},
		{f("", "daemon", "sched", ""), selSrc + sn, selSrc + ` | json source_name="source_name"` + sn},
		{f("warn", "daemon", "sched", ""), selBoth + sn, selBoth + ` | json source_name="source_name"` + sn},
		{f("", "", "", "daemon.*"), sel + tg, sel + ` | json target="target"` + tg},
		{f("warn", "", "", "daemon.*"), selLvl + tg, selLvl + ` | json target="target"` + tg},
		{f("", "daemon", "", "daemon.*"), selSrc + tg, selSrc + ` | json target="target"` + tg},
		{f("warn", "daemon", "", "daemon.*"), selBoth + tg, selBoth + ` | json target="target"` + tg},
		{f("", "", "sched", "daemon.*"), sel + sn + tg, sel + ` | json source_name="source_name", target="target"` + sn + tg},
		{f("warn", "", "sched", "daemon.*"), selLvl + sn + tg, selLvl + ` | json source_name="source_name", target="target"` + sn + tg},
		{f("", "daemon", "sched", "daemon.*"), selSrc + sn + tg, selSrc + ` | json source_name="source_name", target="target"` + sn + tg},
		{f("warn", "daemon", "sched", "daemon.*"), selBoth + sn + tg, selBoth + ` | json source_name="source_name", target="target"` + sn + tg},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got := Query(c.f, opts); got != c.sm {
				t.Errorf("sm mode:\n got %s\nwant %s", got, c.sm)
			}
			if got := Query(c.f, Options{ServiceName: "animus", Parser: true}); got != c.parser {
				t.Errorf("parser mode:\n got %s\nwant %s", got, c.parser)
			}
		})
	}
}

func TestQueryLevelsAndLabels(t *testing.T) {
	o := Options{ServiceName: `svc"x`, ExtraLabels: []Label{{"env", "prod"}, {"host", `a\b`}}}
	for _, c := range []struct{ lvl, want string }{
		{"trace", `{service_name="svc\"x", env="prod", host="a\\b"}`},
		{"debug", `{service_name="svc\"x", env="prod", host="a\\b", level=~` + "`debug|info|warn|error`}"},
		{"info", `{service_name="svc\"x", env="prod", host="a\\b", level=~` + "`info|warn|error`}"},
		{"error", `{service_name="svc\"x", env="prod", host="a\\b", level=~` + "`error`}"},
	} {
		if got := Query(Filter{MinLevel: c.lvl}, o); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.lvl, got, c.want)
		}
	}
}

func TestQuoting(t *testing.T) {
	for _, c := range []struct{ name, filter, want string }{
		{"quote in source_name", `a"b`, `{service_name="animus"} | source_name="a\"b"`},
		{"backslash", `a\b`, `{service_name="animus"} | source_name="a\\b"`},
		{"backtick", "a`b", "{service_name=\"animus\"} | source_name=\"a`b\""},
		{"newline", "a\nb", `{service_name="animus"} | source_name="a\nb"`},
	} {
		if got := Query(Filter{SourceName: c.filter}, opts); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	// A backtick in a glob cannot sit in a raw string: the regexp is
	// double-quoted with its backslashes escaped.
	got := Query(Filter{TargetGlob: "a`b.*"}, opts)
	want := `{service_name="animus"} | target=~"^a` + "`" + `b\\.[^.]*$"`
	if got != want {
		t.Errorf("backtick glob:\n got %s\nwant %s", got, want)
	}
}

func TestGlobRegexp(t *testing.T) {
	for _, c := range []struct {
		glob, re string
		match    []string
		noMatch  []string
	}{
		{"daemon.scheduler.*", `^daemon\.scheduler\.[^.]*$`,
			[]string{"daemon.scheduler.dispatch", "daemon.scheduler."}, []string{"daemon.scheduler.a.b", "daemon.schedulerX"}},
		{"daemon.**", `^daemon\..*$`, []string{"daemon.a", "daemon.a.b.c", "daemon."}, []string{"daemon", "daemonx.a"}},
		{"**", `^.*$`, []string{"", "a.b.c"}, nil},
		{"*", `^[^.]*$`, []string{"", "abc"}, []string{"a.b"}},
		{"a.*.c", `^a\.[^.]*\.c$`, []string{"a.b.c", "a..c"}, []string{"a.b.x.c", "aXbXc"}},
		{"a.**.c", `^a\..*\.c$`, []string{"a.b.x.c", "a..c"}, []string{"a.c"}},
		{"***", `^.*[^.]*$`, []string{"a.b"}, nil},
		{"daemon.events.task-created", `^daemon\.events\.task-created$`,
			[]string{"daemon.events.task-created"}, []string{"daemon.events.task_created", "daemon.events.task-createdX"}},
		{"a+b(c)[d]{1}|e^$?", `^a\+b\(c\)\[d\]\{1\}\|e\^\$\?$`, []string{"a+b(c)[d]{1}|e^$?"}, []string{"aab(c)[d]{1}|e^$?", "ab"}},
		{`back\slash`, `^back\\slash$`, []string{`back\slash`}, []string{"backslash"}},
		{`quote"s`, `^quote"s$`, []string{`quote"s`}, nil},
		{"", `^$`, []string{""}, nil}, // an empty glob is "no filter" in Query and Matcher
	} {
		if got := GlobRegexp(c.glob); got != c.re {
			t.Errorf("GlobRegexp(%q) = %s, want %s", c.glob, got, c.re)
			continue
		}
		re := regexp.MustCompile(c.re)
		m, _ := NewMatcher(Filter{TargetGlob: c.glob})
		for _, s := range c.match {
			if !re.MatchString(s) || !m.Match("info", "daemon", "", s) {
				t.Errorf("%q should match %q", c.glob, s)
			}
		}
		for _, s := range c.noMatch {
			if re.MatchString(s) || m.Match("info", "daemon", "", s) {
				t.Errorf("%q should not match %q", c.glob, s)
			}
		}
	}
}

func TestMatcher(t *testing.T) {
	m, err := NewMatcher(Filter{MinLevel: "warn", Source: "plugin", SourceName: "x", TargetGlob: "p.*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		level, source, name, target string
		want                        bool
	}{
		{"warn", "plugin", "x", "p.a", true},
		{"error", "plugin", "x", "p.a", true},
		{"info", "plugin", "x", "p.a", false},
		{"warn", "daemon", "x", "p.a", false},
		{"warn", "plugin", "y", "p.a", false},
		{"warn", "plugin", "x", "p.a.b", false},
	} {
		if got := m.Match(c.level, c.source, c.name, c.target); got != c.want {
			t.Errorf("%+v: got %v", c, got)
		}
	}
}
