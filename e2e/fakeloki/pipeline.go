package fakeloki

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// result is an entry that passed a query, with its labels split the way
// Loki's categorize-labels encoding splits them.
type result struct {
	stream map[string]string // stream labels
	sm     map[string]string // structured metadata
	parsed map[string]string // labels added by | json (and __error__)
	e      Entry
}

// matchesSelector reports whether a stream's labels satisfy the selector.
func (q *logQuery) matchesSelector(ls map[string]string) bool {
	for _, m := range q.selector {
		if !m.matches(ls[m.name]) {
			return false
		}
	}
	return true
}

// run applies the pipeline to one entry of a selected stream.
func (q *logQuery) run(streamLabels map[string]string, e Entry) (result, bool) {
	r := result{stream: streamLabels, sm: e.SM, e: e}
	lookup := func(n string) string {
		if v, ok := r.parsed[n]; ok {
			return v
		}
		if v, ok := e.SM[n]; ok {
			return v
		}
		return streamLabels[n]
	}
	for _, st := range q.stages {
		switch st.kind {
		case "line":
			var ok bool
			switch st.op {
			case "|=":
				ok = strings.Contains(e.Line, st.value)
			case "!=":
				ok = !strings.Contains(e.Line, st.value)
			case "|~":
				ok = st.re.MatchString(e.Line)
			default:
				ok = !st.re.MatchString(e.Line)
			}
			if !ok {
				return r, false
			}
		case "json":
			if r.parsed == nil {
				r.parsed = map[string]string{}
			}
			extractJSON(e.Line, st.params, streamLabels, e.SM, r.parsed)
		case "labels":
			for _, m := range st.filters {
				if !m.matches(lookup(m.name)) {
					return r, false
				}
			}
		}
	}
	if len(r.parsed) == 0 {
		r.parsed = nil
	}
	return r, true
}

// extractJSON implements `| json` (all top-level and nested keys, nested
// names joined with "_", arrays skipped) and `| json l="path", …` (paths
// like a.b, a[0], a["b"]). A line that is not a JSON object sets
// __error__="JSONParserErr". A name clashing with a stream label or
// structured metadata gets the "_extracted" suffix, as in Loki.
func extractJSON(line string, params []jsonParam, stream, sm, out map[string]string) {
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		out["__error__"] = "JSONParserErr"
		out["__error_details__"] = "Value looks like object, but can't find closing '}' symbol"
		if err != nil {
			out["__error_details__"] = err.Error()
		}
		return
	}
	set := func(name, v string) {
		_, inStream := stream[name]
		_, inSM := sm[name]
		if inStream || inSM {
			name += "_extracted"
		}
		if _, dup := out[name]; !dup {
			out[name] = v
		}
	}
	if len(params) > 0 {
		for _, p := range params {
			if v, ok := jsonPath(obj, p.path); ok {
				set(p.label, v)
			} else {
				set(p.label, "")
			}
		}
		return
	}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := prefix + sanitizeLabel(k)
			switch v := m[k].(type) {
			case map[string]any:
				walk(name+"_", v)
			case []any:
				// arrays are skipped by the json parser without parameters
			default:
				if s, ok := scalar(v); ok {
					set(name, s)
				}
			}
		}
	}
	walk("", obj)
}

func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	case nil:
		return "", false
	}
	return "", false
}

// jsonPath resolves a.b, a[0] and a["b"] paths; objects and arrays are
// returned as their JSON text.
func jsonPath(obj map[string]any, path string) (string, bool) {
	var cur any = obj
	for path != "" {
		var key string
		switch {
		case path[0] == '.':
			path = path[1:]
			continue
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return "", false
			}
			key = strings.Trim(path[1:end], `"'`)
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			key, path = path[:end], path[end:]
		}
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[key]
			if !ok {
				return "", false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(c) {
				return "", false
			}
			cur = c[i]
		default:
			return "", false
		}
	}
	if s, ok := scalar(cur); ok {
		return s, true
	}
	if cur == nil {
		return "", true
	}
	b, _ := json.Marshal(cur)
	return string(b), true
}

// sanitizeLabel replaces characters not allowed in label names with "_".
func sanitizeLabel(k string) string {
	b := []byte(k)
	for i, c := range b {
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// merged returns stream, structured metadata and parsed labels in one set,
// as Loki returns them without categorize-labels.
func (r result) merged() map[string]string {
	if len(r.sm) == 0 && len(r.parsed) == 0 {
		return r.stream
	}
	out := cloneLabels(r.stream)
	for k, v := range r.sm {
		out[k] = v
	}
	for k, v := range r.parsed {
		out[k] = v
	}
	return out
}
