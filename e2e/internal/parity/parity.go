// Package parity compares what two plugin binaries that serve one wire
// surface (a SQLite and a PostgreSQL backend of one kind) sent in the
// same conformance scenario: it keeps the plugin's frames from a wire log
// and rewrites what differs between any two runs, so that only
// behaviour is left to compare.
package parity

import (
	"fmt"
	"regexp"
	"strings"
)

// PluginFrames keeps, from a scenario's wire log (conformance.Result), the
// process headers without their pids and the frames the plugin sent
// without their timestamps.
func PluginFrames(wire string) []string {
	var out []string
	for _, line := range strings.Split(wire, "\n") {
		if head, ok := strings.CutPrefix(line, "--- process "); ok {
			n, _, _ := strings.Cut(head, " ")
			out = append(out, "--- process "+n)
			continue
		}
		if _, frame, ok := strings.Cut(line, " << "); ok {
			out = append(out, frame)
		}
	}
	return out
}

// Minted is a kind of identifier minted at run time: each distinct match
// becomes <Kind-n>, n counting by first appearance in the scenario, so
// two frames naming the same thing still do after normalising. Kind maps
// a match to its label.
type Minted struct {
	Re   *regexp.Regexp
	Kind func(match string) string
}

// Always is a Kind that labels every match label.
func Always(label string) func(string) string { return func(string) string { return label } }

// The rewrites every kind needs, in order.
var (
	reUUID   = regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)
	reULID   = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
	reTime   = regexp.MustCompile(`\b[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?`)
	reHealth = regexp.MustCompile(`"(uptime_ms|memory_usage_bytes)":[0-9]+`)
	reDesc   = regexp.MustCompile(`("plugin_info":\{[^{}]*"description":)"(?:[^"\\]|\\.)*"`)
)

// Normaliser rewrites one run's frames: UUIDs → <UUID-n>, ULIDs →
// <ULID-n>, then each of Minted (numbered the same way), RFC 3339
// timestamps → <TIME>, health/check's uptime_ms and memory_usage_bytes →
// <N>, Name's matches (the plugin's name) → <PLUGIN> and
// plugin_info.description → <DESCRIPTION>.
type Normaliser struct {
	Name   *regexp.Regexp
	Minted []Minted
}

// Normalise returns frames normalised, one per line.
func (n Normaliser) Normalise(frames []string) string {
	seen := map[string]string{}
	count := map[string]int{}
	number := func(kind func(string) string) func(string) string {
		return func(s string) string {
			if p, ok := seen[s]; ok {
				return p
			}
			k := kind(s)
			count[k]++
			p := fmt.Sprintf("<%s-%d>", k, count[k])
			seen[s] = p
			return p
		}
	}
	minted := append([]Minted{{reUUID, Always("UUID")}, {reULID, Always("ULID")}}, n.Minted...)
	var b strings.Builder
	for _, f := range frames {
		for _, m := range minted {
			f = m.Re.ReplaceAllStringFunc(f, number(m.Kind))
		}
		f = reTime.ReplaceAllString(f, "<TIME>")
		f = reHealth.ReplaceAllString(f, `"$1":<N>`)
		f = n.Name.ReplaceAllString(f, "<PLUGIN>")
		f = reDesc.ReplaceAllString(f, `${1}"<DESCRIPTION>"`)
		b.WriteString(f)
		b.WriteByte('\n')
	}
	return b.String()
}
