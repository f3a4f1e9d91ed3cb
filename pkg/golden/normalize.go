package golden

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
)

// The standard rules replace what differs between two runs of the same
// conversation and nothing else, so a golden still pins every code,
// message, field name and field order.
var (
	// RFC 3339 timestamps (created_at, fetched_at, started_at, …).
	timeRe = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
	// ULIDs (subject ids, queue entry ids, delivery ids): numbered by first
	// appearance, so "the same id" stays visible across frames.
	ulidRe = regexp.MustCompile(`\b[0-7][0-9A-HJKMNP-TV-Z]{25}\b`)
	// UUIDs (queue entry ids), numbered the same way.
	uuidRe = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	// health/check's process figures.
	gaugeRe = regexp.MustCompile(`"(uptime_ms|memory_usage_bytes)":\d+`)
)

// normalize rewrites the plugin's frames for comparison: the variables'
// values (longest first, so a URL wins over a prefix of it) and the build
// version become placeholders, then the standard rules, then the script's
// own.
func normalize(out []byte, vars Vars, version string, extra []Rule) []byte {
	names := make([]string, 0, len(vars))
	for name, value := range vars {
		if value != "" {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return len(vars[names[i]]) > len(vars[names[j]]) })
	for _, name := range names {
		out = bytes.ReplaceAll(out, []byte(vars[name]), []byte("${"+name+"}"))
	}
	if version != "" {
		out = bytes.ReplaceAll(out, []byte(`"`+version+`"`), []byte(`"<VERSION>"`))
	}
	out = timeRe.ReplaceAll(out, []byte("<TIME>"))
	out = number(out, ulidRe, "ULID")
	out = number(out, uuidRe, "UUID")
	out = gaugeRe.ReplaceAll(out, []byte(`"$1":<N>`))
	for _, r := range extra {
		out = r.Re.ReplaceAll(out, r.Repl)
	}
	return out
}

// number replaces each distinct match of re with <label-n>, n counting
// distinct values in order of first appearance.
func number(out []byte, re *regexp.Regexp, label string) []byte {
	ids := map[string]string{}
	return re.ReplaceAllFunc(out, func(m []byte) []byte {
		id, ok := ids[string(m)]
		if !ok {
			id = fmt.Sprintf("<%s-%d>", label, len(ids)+1)
			ids[string(m)] = id
		}
		return []byte(id)
	})
}
