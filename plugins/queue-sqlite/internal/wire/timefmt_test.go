package wire

import (
	"testing"
	"time"
)

func TestTimestampFractionRule(t *testing.T) {
	base := time.Date(2026, 6, 14, 12, 34, 56, 0, time.UTC)
	tests := []struct {
		ns       int
		plus, z  string
		location *time.Location
	}{
		{0, "2026-06-14T12:34:56+00:00", "2026-06-14T12:34:56Z", time.UTC},
		{123_000_000, "2026-06-14T12:34:56.123+00:00", "2026-06-14T12:34:56.123Z", time.UTC},
		{120_000_000, "2026-06-14T12:34:56.120+00:00", "2026-06-14T12:34:56.120Z", time.UTC},
		{123_456_000, "2026-06-14T12:34:56.123456+00:00", "2026-06-14T12:34:56.123456Z", time.UTC},
		{123_456_789, "2026-06-14T12:34:56.123456789+00:00", "2026-06-14T12:34:56.123456789Z", time.UTC},
		{1, "2026-06-14T12:34:56.000000001+00:00", "2026-06-14T12:34:56.000000001Z", time.UTC},
		// Another zone is rendered in UTC.
		{0, "2026-06-14T12:34:56+00:00", "2026-06-14T12:34:56Z", time.FixedZone("x", 2*3600)},
	}
	for _, tt := range tests {
		in := base.Add(time.Duration(tt.ns)).In(tt.location)
		if got := Timestamp(in); got != tt.plus {
			t.Errorf("Timestamp(%v) = %q, want %q", in, got, tt.plus)
		}
		if got := TimestampZ(in); got != tt.z {
			t.Errorf("TimestampZ(%v) = %q, want %q", in, got, tt.z)
		}
	}
}

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 6, 14, 10, 0, 0, 500_000_000, time.UTC)
	ok := []string{
		"2026-06-14T10:00:00.5Z",
		"2026-06-14t10:00:00.5z",
		"2026-06-14 10:00:00.5Z",
		"2026-06-14T12:00:00.500+02:00",
		"2026-06-14T09:00:00.5-01:00",
	}
	for _, s := range ok {
		got, err := ParseTime(s)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v; want %v UTC", s, got, err, want)
		}
	}
	for _, s := range []string{"", "tomorrow", "2026-06-14", "2026-06-14X10:00:00Z", "2026-06-14T10:00:00", "2026-13-14T10:00:00Z"} {
		if _, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) succeeded, want an error", s)
		}
	}
}
