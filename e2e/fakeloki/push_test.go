package fakeloki

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPushRoundTrip(t *testing.T) {
	ts := base.Add(-time.Minute)
	cases := []struct {
		name string
		push func(t *testing.T, s *Server) (int, string)
	}{
		{"json", func(t *testing.T, s *Server) (int, string) {
			return pushJSON(t, s, jsonBody(map[string]string{"service_name": "animus", "level": "info"},
				[]any{ns(ts), `{"msg":"hello"}`, map[string]string{"animus_id": "a1"}}))
		}},
		{"json-gzip", func(t *testing.T, s *Server) (int, string) {
			return pushGzipJSON(t, s, jsonBody(map[string]string{"service_name": "animus", "level": "info"},
				[]any{ns(ts), `{"msg":"hello"}`, map[string]string{"animus_id": "a1"}}))
		}},
		{"protobuf-snappy", func(t *testing.T, s *Server) (int, string) {
			return pushProto(t, s, map[string][]Entry{`{service_name="animus", level="info"}`: {
				{TS: ts, Line: `{"msg":"hello"}`, SM: map[string]string{"animus_id": "a1"}}}})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, Options{})
			if code, body := tc.push(t, s); code != http.StatusNoContent {
				t.Fatalf("push: %d %s", code, body)
			}
			if s.Pushes() != 1 || s.Entries("fake") != 1 {
				t.Fatalf("counters: pushes %d entries %d", s.Pushes(), s.Entries("fake"))
			}
			// Default encoding: structured metadata merged into stream labels.
			_, _, qr := queryRange(t, s, rangeOf(`{service_name="animus"}`))
			if len(qr.Data.Result) != 1 {
				t.Fatalf("result: %+v", qr)
			}
			want := map[string]string{"service_name": "animus", "level": "info", "animus_id": "a1"}
			if got := qr.Data.Result[0].Stream; !reflect.DeepEqual(got, want) {
				t.Errorf("stream %v, want %v", got, want)
			}
			v := qr.Data.Result[0].Values[0]
			var tsStr string
			_ = json.Unmarshal(v[0], &tsStr)
			if tsStr != ns(ts) || len(v) != 2 {
				t.Errorf("value %s", v)
			}
			// categorize-labels: SM in a third element, stream labels alone.
			_, _, qr = queryRange(t, s, rangeOf(`{service_name="animus"}`), "X-Loki-Response-Encoding-Flags", "categorize-labels")
			r := qr.Data.Result[0]
			if _, ok := r.Stream["animus_id"]; ok || len(r.Values[0]) != 3 {
				t.Fatalf("categorized: %+v", r)
			}
			var meta struct {
				SM map[string]string `json:"structuredMetadata"`
			}
			_ = json.Unmarshal(r.Values[0][2], &meta)
			if meta.SM["animus_id"] != "a1" || !reflect.DeepEqual(qr.Data.EncodingFlags, []string{"categorize-labels"}) {
				t.Errorf("meta %s flags %v", r.Values[0][2], qr.Data.EncodingFlags)
			}
		})
	}
}

func TestPushValidation(t *testing.T) {
	ts := ns(base.Add(-time.Minute))
	many := map[string]string{}
	for _, c := range "abcdefghijklmnop" { // 16 labels
		many[string(c)] = "x"
	}
	cases := []struct {
		name   string
		opts   Options
		labels map[string]string
		line   string
		tsv    string
		want   string
	}{
		{"no labels", Options{}, map[string]string{}, "l", ts, "at least one label pair is required"},
		{"bad name", Options{}, map[string]string{"a-b": "x"}, "l", ts, "invalid label name 'a-b'"},
		{"digit first", Options{}, map[string]string{"1a": "x"}, "l", ts, "invalid label name"},
		{"too many", Options{}, many, "l", ts, "has 16 label names; limit 15"},
		{"name too long", Options{MaxLabelNameLength: 3}, map[string]string{"abcd": "x"}, "l", ts, "label name too long"},
		{"value too long", Options{MaxLabelValueLength: 3}, map[string]string{"a": "xxxx"}, "l", ts, "label value too long"},
		{"line too long", Options{MaxLineSize: 4}, map[string]string{"a": "x"}, "12345", ts, "max entry size '4' bytes exceeded"},
		{"too old", Options{}, map[string]string{"a": "x"}, "l", ns(base.Add(-200 * time.Hour)), "timestamp too old"},
		{"too new", Options{}, map[string]string{"a": "x"}, "l", ns(base.Add(time.Hour)), "timestamp too new"},
		{"bad ts", Options{}, map[string]string{"a": "x"}, "l", "yesterday", "invalid timestamp"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, tc.opts)
			code, body := pushJSON(t, s, jsonBody(tc.labels, []any{tc.tsv, tc.line}))
			if code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
				t.Fatalf("got %d %q, want 400 containing %q", code, body, tc.want)
			}
			if s.Entries("fake") != 0 {
				t.Fatal("rejected entry stored")
			}
		})
	}
	t.Run("bad json", func(t *testing.T) {
		s := newTestServer(t, Options{})
		if code, _ := pushJSON(t, s, []byte(`{"streams":`)); code != http.StatusBadRequest {
			t.Fatalf("code %d", code)
		}
	})
	t.Run("bad proto labels", func(t *testing.T) {
		s := newTestServer(t, Options{})
		code, body := pushProto(t, s, map[string][]Entry{`{a=~"x"}`: {{TS: base, Line: "l"}}})
		if code != http.StatusBadRequest || !strings.Contains(body, "error parsing labels") {
			t.Fatalf("got %d %q", code, body)
		}
	})
}

func TestPushDuplicatesAndOrder(t *testing.T) {
	lbl := map[string]string{"app": "a"}
	t0 := base.Add(-10 * time.Minute)
	t.Run("duplicate dropped", func(t *testing.T) {
		s := newTestServer(t, Options{})
		for i := 0; i < 2; i++ {
			if code, body := pushJSON(t, s, jsonBody(lbl, []any{ns(t0), "same"}, []any{ns(t0), "other"})); code != http.StatusNoContent {
				t.Fatalf("%d %s", code, body)
			}
		}
		if n := s.Entries("fake"); n != 2 {
			t.Fatalf("entries %d, want 2", n)
		}
		_, _, qr := queryRange(t, s, rangeOf(`{app="a"}`))
		if got := len(qr.lines()); got != 2 {
			t.Fatalf("query returned %d lines", got)
		}
	})
	t.Run("service_name discovered", func(t *testing.T) {
		s := newTestServer(t, Options{})
		pushJSON(t, s, jsonBody(lbl, []any{ns(t0), "x"}))
		pushJSON(t, s, jsonBody(map[string]string{"env": "prod"}, []any{ns(t0), "y"}))
		_, _, qr := queryRange(t, s, rangeOf(`{service_name=~"a|unknown_service"}`, "direction", "forward"))
		if len(qr.Data.Result) != 2 {
			t.Fatalf("%+v", qr.Data.Result)
		}
	})
	cases := []struct {
		name string
		opts Options
		late time.Time
		want string // "" = accepted
	}{
		{"unordered within window", Options{}, t0.Add(-30 * time.Minute), ""},
		{"unordered too far behind", Options{}, t0.Add(-61 * time.Minute), "entry too far behind"},
		{"window disabled", Options{OutOfOrderWindow: -1}, t0.Add(-2 * time.Hour), ""},
		{"ordered rejects older", Options{OrderedWrites: true}, t0.Add(-time.Nanosecond), "entry out of order"},
		{"ordered accepts equal ts", Options{OrderedWrites: true}, t0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, tc.opts)
			pushJSON(t, s, jsonBody(lbl, []any{ns(t0), "first"}))
			code, body := pushJSON(t, s, jsonBody(lbl, []any{ns(tc.late), "late"}, []any{ns(t0.Add(time.Second)), "ok"}))
			if tc.want == "" {
				if code != http.StatusNoContent || s.Entries("fake") != 3 {
					t.Fatalf("%d %s entries %d", code, body, s.Entries("fake"))
				}
				return
			}
			if code != http.StatusBadRequest || !strings.Contains(body, tc.want) || !strings.Contains(body, "total ignored: 1 out of 2") {
				t.Fatalf("%d %q", code, body)
			}
			if s.Entries("fake") != 2 { // the valid entry of the batch is kept
				t.Fatalf("entries %d", s.Entries("fake"))
			}
		})
	}
}
