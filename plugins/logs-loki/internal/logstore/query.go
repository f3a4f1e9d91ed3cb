package logstore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/cursor"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/logql"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/loki"
)

// QueryParams is LogQuery (params of query and tail). Every field may be
// absent or null.
type QueryParams struct {
	MinLevel   *string `json:"min_level"`
	Source     *string `json:"source"`
	SourceName *string `json:"source_name"`
	TargetGlob *string `json:"target_glob"`
	Since      *string `json:"since"`
	Until      *string `json:"until"`
	Limit      *int64  `json:"limit"`
	Cursor     *string `json:"cursor"`
	Follow     *bool   `json:"follow"`
}

// QueryResult is LogQueryResult.
type QueryResult struct {
	Entries    []Entry `json:"entries"`
	NextCursor string  `json:"next_cursor,omitempty"`
}

// plan is a validated query: the LogQL filter, its Go twin, the window
// [start, end) in ns, the page size and the cursor, if any.
type plan struct {
	filter     logql.Filter
	match      *logql.Matcher
	start, end int64
	limit      int
	hasUntil   bool
	hash       string
	cur        *cursor.Cursor
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// plan validates p. Errors are -32602: an unknown level or source, an
// unparsable time, since after until, a window longer than
// LOKI_MAX_QUERY_WINDOW when both ends are explicit (a window open on
// either side is clamped instead), and a cursor that is malformed or was
// issued for another filter.
func (s *Service) plan(p QueryParams, now time.Time) (*plan, error) {
	f := logql.Filter{MinLevel: str(p.MinLevel), Source: str(p.Source), SourceName: str(p.SourceName), TargetGlob: str(p.TargetGlob)}
	if f.MinLevel != "" && logql.LevelRank(f.MinLevel) < 0 {
		return nil, pluginkit.InvalidParams(`invalid params: field "min_level" must be one of trace, debug, info, warn, error, got %q`, f.MinLevel).WithData("field", "min_level")
	}
	if f.Source != "" && !logql.ValidSource(f.Source) {
		return nil, pluginkit.InvalidParams(`invalid params: field "source" must be one of daemon, plugin, cli, workflow, got %q`, f.Source).WithData("field", "source")
	}
	parseTS := func(field string, v *string) (int64, bool, error) {
		if v == nil {
			return 0, false, nil
		}
		t, err := time.Parse(time.RFC3339Nano, *v)
		if err != nil {
			return 0, false, pluginkit.InvalidParams("invalid params: field %q must be an RFC 3339 timestamp, got %q", field, *v).WithData("field", field)
		}
		return t.UnixNano(), true, nil
	}
	since, hasSince, err := parseTS("since", p.Since)
	if err != nil {
		return nil, err
	}
	until, hasUntil, err := parseTS("until", p.Until)
	if err != nil {
		return nil, err
	}
	if hasSince && hasUntil && since > until {
		return nil, pluginkit.InvalidParams("invalid request: since (%s) is after until (%s)", *p.Since, *p.Until)
	}
	pl := &plan{filter: f, limit: defaultLimit}
	if pl.match, err = logql.NewMatcher(f); err != nil {
		return nil, pluginkit.InvalidParams("invalid params: target_glob: %v", err)
	}
	if p.Limit != nil {
		if *p.Limit < 0 {
			return nil, pluginkit.InvalidParams(`invalid params: field "limit" must not be negative`).WithData("field", "limit")
		}
		pl.limit = int(min(*p.Limit, maxLimit))
	}
	pl.end = now.Add(time.Second).UnixNano() // slack for clocks a little ahead
	if hasUntil {
		pl.end, pl.hasUntil = until, true
	}
	pl.start = pl.end - s.cfg.DefaultLookback.Nanoseconds()
	if hasSince {
		pl.start = since
	}
	if window := s.cfg.MaxQueryWindow.Nanoseconds(); pl.end-pl.start > window {
		if hasSince && hasUntil {
			return nil, pluginkit.InvalidParams("invalid request: the window %s..%s is longer than %s=%s; narrow it or page with since",
				*p.Since, *p.Until, config.EnvMaxQueryWindow, s.cfg.MaxQueryWindow)
		}
		pl.start = pl.end - window
	}
	ns := func(has bool, v int64) string {
		if !has {
			return ""
		}
		return strconv.FormatInt(v, 10)
	}
	pl.hash = cursor.Hash(f.MinLevel, f.Source, f.SourceName, f.TargetGlob, ns(hasSince, since), ns(hasUntil, until))
	if c := str(p.Cursor); c != "" {
		cur, err := cursor.Decode(c)
		if err != nil {
			return nil, pluginkit.NotFound("cursor: %v", err).WithData("field", "cursor")
		}
		if cur.Q != pl.hash {
			return nil, pluginkit.InvalidParams("invalid params: the cursor was issued for a different filter; repeat the original filter or drop the cursor").WithData("field", "cursor")
		}
		pl.cur, pl.start, pl.end = &cur, cur.Start, cur.End
	}
	return pl, nil
}

// query answers log_storage/query: without a cursor the newest limit
// matches, oldest first (what the daemon keeps); with one, the next older
// page.
func (s *Service) query(ctx context.Context, p QueryParams) (QueryResult, error) {
	c, err := s.ready()
	if err != nil {
		return QueryResult{}, err
	}
	pl, err := s.plan(p, time.Now())
	if err != nil {
		return QueryResult{}, err
	}
	recs, next, err := s.page(ctx, c, pl, cursor.Backward)
	if err != nil {
		return QueryResult{}, err
	}
	res := QueryResult{Entries: make([]Entry, len(recs)), NextCursor: next}
	for i, r := range recs {
		res.Entries[i] = r.Entry
	}
	return res, nil
}

// page reads one page in dir (the cursor's direction when it has one):
// Loki's matches plus the read-your-writes buffer's, minus what the
// cursor says was returned already, deduplicated by id, ordered by (ts,
// id) and trimmed to the limit on the far side (backward keeps the
// newest). It returns the page oldest-first and the next cursor, which is
// set only when the page is full.
func (s *Service) page(ctx context.Context, c *loki.Client, pl *plan, dir string) ([]record, string, error) {
	if pl.cur != nil {
		dir = pl.cur.Dir
	}
	if pl.limit == 0 || pl.end <= pl.start {
		return nil, "", nil
	}
	r := loki.Range{Start: pl.start, End: pl.end, Limit: pl.limit, Backward: dir == cursor.Backward}
	if pl.cur != nil {
		// Re-read the boundary timestamp; ask for the ids seen there on
		// top of the page so skipping them cannot shorten the page.
		r.Limit = min(pl.limit+len(pl.cur.IDs), maxLimit)
		if dir == cursor.Backward {
			r.End = min(pl.end, pl.cur.TS+1)
		} else {
			r.Start = max(pl.start, pl.cur.TS)
		}
	}
	r.Query = logql.Query(pl.filter, s.queryOptions())
	results, err := c.QueryRange(ctx, r)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, "", err
		}
		return nil, "", rpcError("query", err)
	}
	keep := func(rec record) bool {
		if rec.NS < r.Start || rec.NS >= r.End {
			return false
		}
		if pl.cur != nil && pl.cur.Seen(rec.NS, rec.Entry.ID) {
			return false
		}
		return pl.match.Match(rec.Entry.Level, rec.Entry.Source, rec.sourceName(), rec.Entry.Target)
	}
	var recs []record
	for _, res := range results {
		if rec := fromResult(res); keep(rec) {
			recs = append(recs, rec)
		}
	}
	recs = append(recs, s.buf.matching(r.Start, r.End, keep)...)
	recs = dedupSorted(recs)
	if len(recs) > pl.limit {
		if dir == cursor.Backward {
			recs = recs[len(recs)-pl.limit:]
		} else {
			recs = recs[:pl.limit]
		}
	}
	if len(recs) < pl.limit || len(recs) == 0 {
		return recs, "", nil
	}
	boundary := recs[len(recs)-1].NS
	if dir == cursor.Backward {
		boundary = recs[0].NS
	}
	next := cursor.Cursor{Dir: dir, TS: boundary, Q: pl.hash, Start: pl.start, End: pl.end}
	if pl.cur != nil && pl.cur.TS == boundary {
		next.IDs = append(next.IDs, pl.cur.IDs...)
	}
	for _, rec := range recs {
		if rec.NS == boundary {
			next.IDs = append(next.IDs, rec.Entry.ID)
		}
	}
	return recs, cursor.Encode(next), nil
}

// queryOptions picks how filters on id, target and source_name are read.
// Only LOKI_STRUCTURED_METADATA=on trusts structured metadata alone. In
// auto mode another process (or this one, before a fallback) may have
// stored entries without it, so reads extract the fields from the JSON
// line, which every entry has; where structured metadata exists Loki
// resolves the filter to it, with the same value.
func (s *Service) queryOptions() logql.Options {
	o := s.opts
	o.Parser = s.cfg.StructuredMetadata != config.SMOn || s.parser.Load()
	return o
}

// dedupSorted orders records by (ts, id) and keeps the first of each id.
func dedupSorted(recs []record) []record {
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].NS != recs[j].NS {
			return recs[i].NS < recs[j].NS
		}
		return recs[i].Entry.ID < recs[j].Entry.ID
	})
	seen := make(map[string]struct{}, len(recs))
	out := recs[:0]
	for _, r := range recs {
		if _, dup := seen[r.Entry.ID]; dup {
			continue
		}
		seen[r.Entry.ID] = struct{}{}
		out = append(out, r)
	}
	return out
}

// String renders a plan for logs.
func (pl *plan) String() string {
	return fmt.Sprintf("%+v [%d,%d) limit %d", pl.filter, pl.start, pl.end, pl.limit)
}
