package logql

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Levels in ascending severity, the LogLevel enum.
var Levels = []string{"trace", "debug", "info", "warn", "error"}

// Sources is the LogSource enum.
var Sources = []string{"daemon", "plugin", "cli", "workflow"}

// LevelRank returns the position of a level in Levels, or -1.
func LevelRank(level string) int {
	for i, l := range Levels {
		if l == level {
			return i
		}
	}
	return -1
}

// ValidSource reports whether s is a LogSource.
func ValidSource(s string) bool {
	for _, v := range Sources {
		if v == s {
			return true
		}
	}
	return false
}

// Filter is the server-side part of a LogQuery (time, limit and cursor are
// query_range parameters, not LogQL). Empty means "no filter".
type Filter struct {
	MinLevel   string
	Source     string
	SourceName string
	TargetGlob string
}

// Label is one static stream label.
type Label struct{ Name, Value string }

// Options shape the selector and pipeline.
type Options struct {
	ServiceName string
	ExtraLabels []Label // sorted; part of every selector
	// Parser reads id, target and source_name from the JSON line instead
	// of structured metadata (LOKI_STRUCTURED_METADATA=off, or after Loki
	// refused structured metadata in auto mode).
	Parser bool
}

// Query renders f as a LogQL log query.
func Query(f Filter, o Options) string {
	var b strings.Builder
	b.WriteString("{service_name=")
	b.WriteString(QuoteString(o.ServiceName))
	for _, l := range o.ExtraLabels {
		fmt.Fprintf(&b, ", %s=%s", l.Name, QuoteString(l.Value))
	}
	if f.Source != "" {
		b.WriteString(", source=" + QuoteString(f.Source))
	}
	if r := LevelRank(f.MinLevel); r > 0 {
		b.WriteString(", level=~" + QuoteRegexp(strings.Join(Levels[r:], "|")))
	}
	b.WriteByte('}')
	if f.SourceName == "" && f.TargetGlob == "" {
		return b.String()
	}
	if o.Parser {
		var params []string
		if f.SourceName != "" {
			params = append(params, `source_name="source_name"`)
		}
		if f.TargetGlob != "" {
			params = append(params, `target="target"`)
		}
		b.WriteString(" | json " + strings.Join(params, ", "))
	}
	if f.SourceName != "" {
		b.WriteString(" | source_name=" + QuoteString(f.SourceName))
	}
	if f.TargetGlob != "" {
		b.WriteString(" | target=~" + QuoteRegexp(GlobRegexp(f.TargetGlob)))
	}
	return b.String()
}

// GlobRegexp turns a target glob into an anchored RE2 expression: "**"
// matches any run of characters including ".", "*" any run without ".",
// and every other character is literal.
func GlobRegexp(glob string) string {
	var b strings.Builder
	b.WriteByte('^')
	for i := 0; i < len(glob); {
		j := strings.IndexByte(glob[i:], '*')
		if j < 0 {
			b.WriteString(regexp.QuoteMeta(glob[i:]))
			break
		}
		b.WriteString(regexp.QuoteMeta(glob[i : i+j]))
		i += j
		if strings.HasPrefix(glob[i:], "**") {
			b.WriteString(".*")
			i += 2
		} else {
			b.WriteString(`[^.]*`)
			i++
		}
	}
	b.WriteByte('$')
	return b.String()
}

// QuoteString renders a LogQL double-quoted string (Go escapes, which is
// what LogQL's lexer undoes).
func QuoteString(s string) string { return strconv.Quote(s) }

// QuoteRegexp renders a regular expression as a LogQL raw string, so
// backslashes need no doubling, unless it contains a backtick, which a raw
// string cannot hold.
func QuoteRegexp(re string) string {
	if strings.Contains(re, "`") {
		return strconv.Quote(re)
	}
	return "`" + re + "`"
}

// Matcher evaluates a Filter in Go, exactly as the LogQL above selects.
type Matcher struct {
	f       Filter
	minRank int
	target  *regexp.Regexp
}

// NewMatcher compiles f.
func NewMatcher(f Filter) (*Matcher, error) {
	m := &Matcher{f: f, minRank: LevelRank(f.MinLevel)}
	if f.TargetGlob != "" {
		re, err := regexp.Compile(GlobRegexp(f.TargetGlob))
		if err != nil {
			return nil, err
		}
		m.target = re
	}
	return m, nil
}

// Match reports whether an entry with these fields passes the filter.
func (m *Matcher) Match(level, source, sourceName, target string) bool {
	if m.f.Source != "" && source != m.f.Source {
		return false
	}
	if m.minRank > 0 && LevelRank(level) < m.minRank {
		return false
	}
	if m.f.SourceName != "" && sourceName != m.f.SourceName {
		return false
	}
	return m.target == nil || m.target.MatchString(target)
}
