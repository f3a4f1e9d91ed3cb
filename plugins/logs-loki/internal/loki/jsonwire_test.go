package loki

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// referenceJSONPush is how the body used to be made (maps, []any and
// json.Encoder); the hand-written renderer must match it byte for byte.
func referenceJSONPush(t *testing.T, streams []Stream) []byte {
	t.Helper()
	type stream struct {
		Stream map[string]string `json:"stream"`
		Values [][]any           `json:"values"`
	}
	body := struct {
		Streams []stream `json:"streams"`
	}{Streams: make([]stream, 0, len(streams))}
	for _, s := range streams {
		js := stream{Stream: make(map[string]string, len(s.Labels)), Values: make([][]any, 0, len(s.Entries))}
		for _, l := range s.Labels {
			js.Stream[l.Name] = l.Value
		}
		for _, e := range s.Entries {
			v := []any{strconv.FormatInt(e.TS, 10), e.Line}
			if len(e.SM) > 0 {
				sm := make(map[string]string, len(e.SM))
				for _, l := range e.SM {
					sm[l.Name] = l.Value
				}
				v = append(v, sm)
			}
			js.Values = append(js.Values, v)
		}
		body.Streams = append(body.Streams, js)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(body); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// awkwardStrings exercise every escaping rule.
func awkwardStrings() []string {
	return []string{
		"", "plain", `q"uote`, `back\slash`, "<b>&amp;</b>", "ctl\x00\x01\x1f\x7f", "\b\f\n\r\t",
		"é ü 日本 🎉", "bad\xffutf8\xc3", "sep\u2028para\u2029", strings.Repeat("x", 300),
	}
}

func TestJSONPushMatchesEncodingJSON(t *testing.T) {
	awkward := awkwardStrings()
	cases := [][]Stream{
		nil,
		{{Labels: nil, Entries: nil}},
		{{Labels: []Label{{"service_name", "animus"}, {"level", "info"}, {"source", "daemon"}}}},
		// unsorted and repeated names: a map keeps the last value
		{{Labels: []Label{{"z", "1"}, {"a", "2"}, {"z", "3"}}, Entries: []Entry{
			{TS: -1, Line: "x", SM: []Label{{"target", "t"}, {"animus_id", "a"}, {"target", "u"}}},
		}}},
	}
	var es []Entry
	for i, s := range awkward {
		es = append(es, Entry{TS: int64(i) * 1e9, Line: s, SM: []Label{{"animus_id", s}, {s, "v"}}})
		es = append(es, Entry{TS: int64(i), Line: s})
	}
	cases = append(cases, []Stream{{Labels: []Label{{"level", "<&>"}, {"source", awkward[7]}}, Entries: es}, {Labels: []Label{{"a", "b"}}, Entries: es[:3]}})
	for i, streams := range cases {
		got := appendJSONPush(nil, streams)
		if want := referenceJSONPush(t, streams); !bytes.Equal(got, want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range awkwardStrings() {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s, true); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if got := AppendString(nil, s, false); string(got) != strings.TrimSuffix(buf.String(), "\n") {
			t.Errorf("%q unescaped: got %s, want %s", s, got, buf.String())
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range awkwardStrings() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s, true); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
