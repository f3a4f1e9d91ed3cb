package queue

import (
	"math"
	"regexp"
	"testing"
	"time"
)

func TestExpiryNS(t *testing.T) {
	at := time.Date(2026, 6, 14, 12, 0, 0, 5, time.UTC)
	old := time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		runAt time.Time
		grace uint64
		want  *int64 // nil = never expires
	}{
		{"plain", at, 60, ptr(at.Add(time.Minute).UnixNano())},
		{"zero grace", at, 0, ptr(at.UnixNano())},
		{"u64 max never expires", at, math.MaxUint64, nil},
		{"beyond 2262 never expires", at, 300 * 365 * 24 * 3600, nil},
		// Exact even where run_at itself is outside the nanosecond range:
		// 1500 + 400 years is in the past, so the entry is expired.
		{"old run_at, long grace", old, 400 * 365 * 24 * 3600, ptr(old.AddDate(400, 0, -97).UnixNano())},
		{"before 1677 clamps", old, 1, ptr(int64(math.MinInt64))},
	}
	for _, tt := range tests {
		got := expiryNS(tt.runAt, tt.grace)
		switch {
		case tt.want == nil && got != nil:
			t.Errorf("%s: %d, want never", tt.name, *got)
		case tt.want != nil && (got == nil || *got != *tt.want):
			t.Errorf("%s: %v, want %d", tt.name, got, *tt.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestUnixNSClamps(t *testing.T) {
	if got := unixNS(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)); got != math.MaxInt64 {
		t.Errorf("year 9999: %d", got)
	}
	if got := unixNS(time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)); got != math.MinInt64 {
		t.Errorf("year 1000: %d", got)
	}
	now := time.Now()
	if got := unixNS(now); got != now.UnixNano() {
		t.Errorf("now: %d", got)
	}
	if got := addNS(math.MaxInt64-5, time.Second); got != math.MaxInt64 {
		t.Errorf("addNS overflow: %d", got)
	}
}

func TestNewUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := newUUID()
		if !re.MatchString(id) || seen[id] {
			t.Fatalf("bad or repeated UUID v4 %q", id)
		}
		seen[id] = true
	}
}
