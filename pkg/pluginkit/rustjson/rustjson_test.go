package rustjson

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestMarshal(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"html stays as written", map[string]string{"m": "<@U1> & >"}, `{"m":"<@U1> & >"}`},
		{"no trailing newline", []int{1, 2}, `[1,2]`},
		{"raw message compacted", json.RawMessage("{ \"a\" :\n 1 }"), `{"a":1}`},
		{"nil", nil, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("Marshal = %s, want %s", got, tt.want)
			}
		})
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Fatal("Marshal of a func did not fail")
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: `{"b":1,"a":{"d":[{"z":1,"y":2}],"c":"<x>"}}`, want: `{"a":{"c":"<x>","d":[{"y":2,"z":1}]},"b":1}`},
		{in: `1.50`, want: `1.50`},
		{in: `12345678901234567890123`, want: `12345678901234567890123`},
		{in: `null`, want: ``},
		{in: ``, want: ``},
		{in: `{"a":`, wantErr: true},
		{in: `{} {}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Canonical(json.RawMessage(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("Canonical(%s) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if string(got) != tt.want {
				t.Fatalf("Canonical(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestTime(t *testing.T) {
	base := time.Date(2026, 6, 14, 12, 0, 5, 0, time.FixedZone("X", 3600))
	tests := []struct {
		ns         int
		want, wntZ string
	}{
		{0, "2026-06-14T11:00:05+00:00", "2026-06-14T11:00:05Z"},
		{120_000_000, "2026-06-14T11:00:05.120+00:00", "2026-06-14T11:00:05.120Z"},
		{1_000, "2026-06-14T11:00:05.000001+00:00", "2026-06-14T11:00:05.000001Z"},
		{7, "2026-06-14T11:00:05.000000007+00:00", "2026-06-14T11:00:05.000000007Z"},
	}
	for _, tt := range tests {
		ts := base.Add(time.Duration(tt.ns))
		if got := Time(ts); got != tt.want {
			t.Errorf("Time(+%dns) = %s, want %s", tt.ns, got, tt.want)
		}
		if got := TimeZ(ts); got != tt.wntZ {
			t.Errorf("TimeZ(+%dns) = %s, want %s", tt.ns, got, tt.wntZ)
		}
		back, err := ParseTime(tt.want)
		if err != nil || !back.Equal(ts) {
			t.Errorf("ParseTime(%s) = %v, %v; want %v", tt.want, back, err, ts)
		}
	}
}

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 6, 14, 10, 0, 0, 0, time.UTC)
	for _, in := range []string{"2026-06-14T10:00:00Z", "2026-06-14t10:00:00z", "2026-06-14 10:00:00Z", "2026-06-14T12:00:00+02:00"} {
		got, err := ParseTime(in)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v; want %v UTC", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2026-06-14", "2026-06-14X10:00:00Z", "2026-06-14T25:00:00Z", "yesterday at noon, roughly"} {
		if _, err := ParseTime(in); !errors.Is(err, ErrTimestamp) {
			t.Errorf("ParseTime(%q) err = %v, want ErrTimestamp", in, err)
		}
	}
}
