package fakeloki

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// rangeParams are the validated query_range parameters.
type rangeParams struct {
	q          *logQuery
	start, end time.Time // [start, end)
	limit      int
	backward   bool
}

func (s *Server) handleQueryRange(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p, err := s.parseRange(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	results := s.evaluate(tenantOf(r), p)
	categorize := false
	for _, f := range strings.Split(r.Header.Get("X-Loki-Response-Encoding-Flags"), ",") {
		if strings.TrimSpace(f) == "categorize-labels" {
			categorize = true
		}
	}
	data := map[string]any{"resultType": "streams", "result": encodeStreams(results, categorize)}
	if categorize {
		data["encodingFlags"] = []string{"categorize-labels"}
	}
	writeJSON(w, map[string]any{"status": "success", "data": data})
}

func (s *Server) parseRange(r *http.Request) (rangeParams, error) {
	var p rangeParams
	qs := r.Form.Get("query")
	if qs == "" {
		return p, fmt.Errorf("query parameter is required")
	}
	q, err := parseLogQL(qs)
	if err != nil {
		return p, err
	}
	p.q = q
	now := s.opts.Now()
	p.end = now
	if v := r.Form.Get("end"); v != "" {
		if p.end, err = parseTime(v); err != nil {
			return p, fmt.Errorf("invalid parameter \"end\": %v", err)
		}
	}
	p.start = p.end.Add(-time.Hour)
	if v := r.Form.Get("start"); v != "" {
		if p.start, err = parseTime(v); err != nil {
			return p, fmt.Errorf("invalid parameter \"start\": %v", err)
		}
	} else if v := r.Form.Get("since"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return p, fmt.Errorf("invalid parameter \"since\": %v", err)
		}
		p.start = p.end.Add(-d)
	}
	if p.end.Before(p.start) {
		return p, fmt.Errorf("end timestamp must not be before or equal to start time")
	}
	if l := p.end.Sub(p.start); s.opts.MaxQueryLength > 0 && l > s.opts.MaxQueryLength {
		return p, fmt.Errorf("the query time range exceeds the limit (query length: %s, limit: %s)", l, s.opts.MaxQueryLength)
	}
	p.limit = 100
	if v := r.Form.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return p, fmt.Errorf("invalid parameter \"limit\": %v", err)
		}
		if n <= 0 {
			return p, fmt.Errorf("limit must be a positive value")
		}
		p.limit = n
	}
	if p.limit > s.opts.MaxEntriesLimitPerQuery {
		return p, fmt.Errorf("max entries limit per query exceeded, limit > max_entries_limit_per_query (%d > %d)", p.limit, s.opts.MaxEntriesLimitPerQuery)
	}
	switch strings.ToLower(r.Form.Get("direction")) {
	case "", "backward":
		p.backward = true
	case "forward":
	default:
		return p, fmt.Errorf("invalid direction %q", r.Form.Get("direction"))
	}
	return p, nil
}

// parseTime accepts Unix nanoseconds, Unix seconds (an integer of at most
// 10 digits, or with a fraction), or RFC 3339, as Loki does.
func parseTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if len(strings.TrimPrefix(v, "-")) <= 10 {
			return time.Unix(n, 0), nil
		}
		return time.Unix(0, n), nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)), nil
	}
	return time.Time{}, fmt.Errorf("cannot parse %q to a valid timestamp", v)
}

// evaluate returns the first p.limit matches in p's direction, ordered by
// timestamp (ties by arrival).
func (s *Server) evaluate(tenantID string, p rangeParams) []result {
	var out []result
	now := time.Now()
	for _, st := range s.store.snapshot(tenantID) {
		if !p.q.matchesSelector(st.labels) {
			continue
		}
		for _, e := range st.entries {
			if e.TS.Before(p.start) || !e.TS.Before(p.end) || e.visible.After(now) {
				continue
			}
			if r, ok := p.q.run(st.labels, e); ok {
				out = append(out, r)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].e, out[j].e
		if !a.TS.Equal(b.TS) {
			return a.TS.Before(b.TS) != p.backward
		}
		return (a.seq < b.seq) != p.backward
	})
	if len(out) > p.limit {
		out = out[:p.limit]
	}
	return out
}

// encodeStreams groups results into Loki's streams result. Without
// categorize, structured metadata and parsed labels are merged into the
// stream labels (which splits streams); with it, they go to a third
// element {"structuredMetadata":{…},"parsed":{…}} (omitted when empty).
// Streams appear in order of their first entry; values keep result order.
func encodeStreams(results []result, categorize bool) []map[string]any {
	type group struct {
		labels map[string]string
		values [][]any
	}
	var order []string
	groups := map[string]*group{}
	for _, r := range results {
		ls := r.stream
		if !categorize {
			ls = r.merged()
		}
		key := labelsKey(ls)
		g := groups[key]
		if g == nil {
			g = &group{labels: ls}
			groups[key] = g
			order = append(order, key)
		}
		v := []any{strconv.FormatInt(r.e.TS.UnixNano(), 10), r.e.Line}
		if categorize && (len(r.sm) > 0 || len(r.parsed) > 0) {
			meta := map[string]any{}
			if len(r.sm) > 0 {
				meta["structuredMetadata"] = r.sm
			}
			if len(r.parsed) > 0 {
				meta["parsed"] = r.parsed
			}
			v = append(v, meta)
		}
		g.values = append(g.values, v)
	}
	out := make([]map[string]any, 0, len(order))
	for _, k := range order {
		out = append(out, map[string]any{"stream": groups[k].labels, "values": groups[k].values})
	}
	return out
}
