package model

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseStatus(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Status
	}{
		{"ready", Ready}, {"in-progress", InProgress}, {"blocked", Blocked}, {"done", Done}, {"cancelled", Cancelled},
		{"In_Progress", InProgress}, {"inprogress", InProgress}, {"doing", InProgress},
		{"completed", Done}, {"complete", Done}, {" closed ", Done}, {"canceled", Cancelled},
		{"todo", Ready}, {"backlog", Ready}, {"OPEN", Ready}, {"new", Ready},
	} {
		got, err := ParseStatus("status", tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseStatus(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "finished", "in progress", "readyy"} {
		_, err := ParseStatus("status", bad)
		var in *InputError
		if !errors.As(err, &in) || in.Field != "status" || !strings.Contains(in.Msg, "in-progress") || !strings.Contains(in.Msg, "aliases") {
			t.Errorf("ParseStatus(%q) error %v does not list the accepted values", bad, err)
		}
	}
}

func TestParsePriority(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int // -1 = nil
	}{
		{`0`, 0}, {`4`, 4}, {`"3"`, 3}, {`"high"`, 3}, {`"Critical"`, 4}, {`"urgent"`, 4}, {`"normal"`, 2},
		{`"medium"`, 2}, {`"low"`, 1}, {`"none"`, 0}, {`"p0"`, 4}, {`"P1"`, 3}, {`"p2"`, 2}, {`"p3"`, 1}, {`"p4"`, 0},
		{`null`, -1},
	} {
		got, err := ParsePriority("priority", json.RawMessage(tc.raw))
		if err != nil {
			t.Errorf("ParsePriority(%s): %v", tc.raw, err)
			continue
		}
		if (tc.want == -1) != (got == nil) || (got != nil && *got != tc.want) {
			t.Errorf("ParsePriority(%s) = %v, want %d", tc.raw, got, tc.want)
		}
	}
	for _, bad := range []string{`5`, `-1`, `2.5`, `"p5"`, `"highest"`, `true`, `[]`} {
		if _, err := ParsePriority("priority", json.RawMessage(bad)); err == nil {
			t.Errorf("ParsePriority(%s) accepted", bad)
		}
	}
}

// Time is what every timestamp on the wire goes through: chrono's rendering
// of a DateTime<Utc>, quoted, from any zone.
func TestTimeMarshalJSON(t *testing.T) {
	base := time.Date(2026, 5, 13, 13, 55, 0, 0, time.UTC)
	for _, tc := range []struct {
		ns   int
		want string
	}{
		{0, "2026-05-13T13:55:00Z"},
		{120_000_000, "2026-05-13T13:55:00.120Z"},
		{123_456_000, "2026-05-13T13:55:00.123456Z"},
		{123_456_789, "2026-05-13T13:55:00.123456789Z"},
		{100, "2026-05-13T13:55:00.000000100Z"},
	} {
		got, err := json.Marshal(Time{base.Add(time.Duration(tc.ns))})
		if err != nil || string(got) != `"`+tc.want+`"` {
			t.Errorf("Time(+%dns) = %s, %v; want %q", tc.ns, got, err, tc.want)
		}
	}
	offset := time.Date(2026, 5, 13, 15, 55, 0, 0, time.FixedZone("x", 7200))
	if got, _ := json.Marshal(Time{offset}); string(got) != `"2026-05-13T13:55:00Z"` {
		t.Errorf("Time converts to UTC: got %s", got)
	}
	back, err := ParseTime("t", "2026-05-13T13:55:00.123456789+00:00")
	if err != nil || !back.Equal(base.Add(123456789)) {
		t.Errorf("ParseTime of a chrono to_rfc3339 value: %v %v", back, err)
	}
}
