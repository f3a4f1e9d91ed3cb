package logstore

import (
	"errors"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/cursor"
)

func sp(s string) *string { return &s }

func TestPlan(t *testing.T) {
	cfg, _ := config.Load(func(string) string { return "" })
	cfg.MaxQueryWindow, cfg.DefaultLookback = time.Hour, 30*time.Minute
	s := New(cfg)
	now := time.Date(2026, 5, 17, 12, 0, 0, 0, time.UTC)
	ts := func(d time.Duration) *string { return sp(now.Add(d).Format(time.RFC3339Nano)) }

	pl, err := s.plan(QueryParams{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if pl.limit != defaultLimit || pl.end != now.Add(time.Second).UnixNano() || pl.end-pl.start != (30*time.Minute).Nanoseconds() {
		t.Fatalf("defaults: %s", pl)
	}
	big := int64(1_000_000)
	if pl, _ = s.plan(QueryParams{Limit: &big}, now); pl.limit != maxLimit {
		t.Fatalf("limit %d, want the Loki cap", pl.limit)
	}
	// Open-ended windows are clamped; explicit ones are refused.
	if pl, _ = s.plan(QueryParams{Since: ts(-3 * time.Hour)}, now); pl.end-pl.start != time.Hour.Nanoseconds() {
		t.Fatalf("since-only window not clamped: %s", pl)
	}
	if pl, _ = s.plan(QueryParams{Until: ts(-3 * time.Hour)}, now); pl.end != now.Add(-3*time.Hour).UnixNano() || !pl.hasUntil {
		t.Fatalf("until: %s", pl)
	}
	neg := int64(-1)
	for name, c := range map[string]struct {
		p    QueryParams
		want pluginkit.Category
	}{
		"since after until": {QueryParams{Since: ts(0), Until: ts(-time.Minute)}, pluginkit.CategoryInvalidRequest},
		"explicit too wide": {QueryParams{Since: ts(-2 * time.Hour), Until: ts(0)}, pluginkit.CategoryInvalidRequest},
		"bad level":         {QueryParams{MinLevel: sp("fatal")}, pluginkit.CategoryInvalidRequest},
		"bad source":        {QueryParams{Source: sp("kernel")}, pluginkit.CategoryInvalidRequest},
		"bad since":         {QueryParams{Since: sp("2026-05-17")}, pluginkit.CategoryInvalidRequest},
		"negative limit":    {QueryParams{Limit: &neg}, pluginkit.CategoryInvalidRequest},
		"garbage cursor":    {QueryParams{Cursor: sp("zzz")}, pluginkit.CategoryNotFound},
	} {
		_, err := s.plan(c.p, now)
		var pe *pluginkit.Error
		if !errors.As(err, &pe) || pe.Category != c.want || pe.Code != -32602 {
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}
	// A cursor pins the window and must come with the same filter.
	pl, _ = s.plan(QueryParams{SourceName: sp("x")}, now)
	c := cursor.Encode(cursor.Cursor{Dir: cursor.Backward, TS: pl.start + 5, Q: pl.hash, Start: pl.start, End: pl.end})
	later := now.Add(time.Hour)
	got, err := s.plan(QueryParams{SourceName: sp("x"), Cursor: &c}, later)
	if err != nil || got.start != pl.start || got.end != pl.end || got.cur == nil {
		t.Fatalf("cursor plan %v %v", got, err)
	}
	if _, err := s.plan(QueryParams{SourceName: sp("y"), Cursor: &c}, later); err == nil {
		t.Fatal("cursor accepted with another filter")
	}
}
