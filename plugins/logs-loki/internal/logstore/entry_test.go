package logstore

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/loki"
)

func TestParseEntry(t *testing.T) {
	ok := `{"id":"a","ts":"2026-05-17T18:20:34.123456789+00:00","level":"info","source":"daemon","target":"t","message":"m","fields":{ "x" : 1 }}`
	rec, err := parseEntry(json.RawMessage(ok))
	if err != nil {
		t.Fatal(err)
	}
	if rec.NS != 1779042034123456789 || string(rec.Entry.Fields) != `{"x":1}` || rec.Entry.SourceName != nil {
		t.Fatalf("%+v %s", rec, rec.Entry.Fields)
	}
	for name, c := range map[string]struct{ raw, want string }{
		"missing message": {`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"info","source":"daemon","target":"t"}`, `"message" is required`},
		"empty id":        {`{"id":"","ts":"2026-05-17T18:20:34Z","level":"info","source":"daemon","target":"t","message":""}`, `"id"`},
		"bad ts":          {`{"id":"a","ts":"yesterday","level":"info","source":"daemon","target":"t","message":""}`, `"ts"`},
		"bad level":       {`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"INFO","source":"daemon","target":"t","message":""}`, `"level"`},
		"bad source":      {`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"info","source":"kernel","target":"t","message":""}`, `"source"`},
		"not object":      {`[1]`, "not a LogEntry"},
	} {
		if _, err := parseEntry(json.RawMessage(c.raw)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", name, err, c.want)
		}
	}
	// null fields and null source_name are omitted on the way out.
	rec, err = parseEntry(json.RawMessage(`{"id":"a","ts":"2026-05-17T18:20:34Z","level":"info","source":"daemon","target":"t","message":"<m>","fields":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(marshalLine(rec.Entry)); got != `{"id":"a","ts":"2026-05-17T18:20:34Z","level":"info","source":"daemon","target":"t","message":"<m>"}` {
		t.Fatalf("line %s", got)
	}
}

func TestEncodeLineTruncates(t *testing.T) {
	base := Entry{ID: "a", TS: "2026-05-17T18:20:34Z", Level: "info", Source: "daemon", Target: "t"}
	for name, c := range map[string]struct {
		msg    string
		fields string
		check  func(t *testing.T, e Entry)
	}{
		"multibyte message": {strings.Repeat("é", 1000), `{"k":"v"}`, func(t *testing.T, e Entry) {
			var f map[string]any
			_ = json.Unmarshal(e.Fields, &f)
			if f["k"] != "v" || f[truncatedKey] != true || !utf8.ValidString(e.Message) {
				t.Fatalf("%s / valid utf8 %v", e.Fields, utf8.ValidString(e.Message))
			}
		}},
		"escaped message": {strings.Repeat("\"\n", 1000), ``, func(t *testing.T, e Entry) {
			if string(e.Fields) != `{"_animus_truncated":true}` {
				t.Fatalf("%s", e.Fields)
			}
		}},
		"array fields kept under value": {strings.Repeat("x", 1000), `[1,2]`, func(t *testing.T, e Entry) {
			if string(e.Fields) != `{"_animus_truncated":true,"value":[1,2]}` {
				t.Fatalf("%s", e.Fields)
			}
		}},
		"huge fields replaced": {"short", `{"blob":"` + strings.Repeat("y", 2000) + `"}`, func(t *testing.T, e Entry) {
			if !strings.Contains(string(e.Fields), `"_animus_fields_bytes":`) || e.Message != "short" {
				t.Fatalf("%s %q", e.Fields, e.Message)
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			e := base
			e.Message = c.msg
			if c.fields != "" {
				e.Fields = json.RawMessage(c.fields)
			}
			const max = 1024
			line, truncated, err := encodeLine(e, max)
			if err != nil || !truncated || len(line) > max {
				t.Fatalf("len %d truncated %v err %v", len(line), truncated, err)
			}
			var out Entry
			if err := json.Unmarshal([]byte(line), &out); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(c.msg, out.Message) {
				t.Fatal("message is not a prefix of the original")
			}
			c.check(t, out)
		})
	}
	short := base
	short.Message = "fits"
	if line, truncated, err := encodeLine(short, 1024); err != nil || truncated || !strings.Contains(line, `"fits"`) {
		t.Fatalf("%s %v %v", line, truncated, err)
	}
	huge := base
	huge.Target = strings.Repeat("t", 2000)
	if _, _, err := encodeLine(huge, 1024); err == nil {
		t.Fatal("an entry whose target alone exceeds the limit was accepted")
	}
}

func TestFromResultForeignLine(t *testing.T) {
	rec := fromResult(loki.Result{TS: 1779042034000000001, Line: "plain text from promtail",
		Stream: map[string]string{"level": "warn", "source": "nope"}, SM: map[string]string{"target": "x.y"}})
	e := rec.Entry
	if e.Level != "warn" || e.Source != "plugin" || e.Target != "x.y" || e.Message != "plain text from promtail" ||
		e.TS != "2026-05-17T18:20:34.000000001Z" || !strings.HasPrefix(e.ID, "loki-") {
		t.Fatalf("%+v", e)
	}
	if _, err := parseEntry(mustMarshal(e)); err != nil {
		t.Fatalf("rebuilt entry is not valid: %v", err)
	}
}

func mustMarshal(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func TestDedupSorted(t *testing.T) {
	recs := []record{{3, Entry{ID: "c"}}, {1, Entry{ID: "b"}}, {1, Entry{ID: "a"}}, {2, Entry{ID: "a"}}}
	got := dedupSorted(recs)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.Entry.ID)
	}
	if strings.Join(ids, ",") != "a,b,c" {
		t.Fatalf("%v", ids)
	}
}

func TestBufferAndSeenSet(t *testing.T) {
	b := newBuffer(3, 1<<20, time.Hour)
	ch, stop := b.subscribe()
	defer stop()
	for i := int64(1); i <= 5; i++ {
		b.add([]record{{i, Entry{ID: string(rune('a' + i))}}})
	}
	got := b.matching(0, 100, func(record) bool { return true })
	if len(got) != 3 || got[0].NS != 3 || got[2].NS != 5 {
		t.Fatalf("ring kept %+v", got)
	}
	if got := b.matching(4, 5, func(record) bool { return true }); len(got) != 1 || got[0].NS != 4 {
		t.Fatalf("window [4,5) gave %+v", got)
	}
	if n := len(ch); n != 5 {
		t.Fatalf("subscriber got %d batches", n)
	}
	// The byte bound evicts the oldest entries too.
	small := newBuffer(10, 2*entrySize(Entry{Message: "xx"}), time.Hour)
	for i := int64(1); i <= 3; i++ {
		small.add([]record{{i, Entry{Message: "xx"}}})
	}
	if got := small.matching(0, 100, func(record) bool { return true }); len(got) != 2 || got[0].NS != 2 {
		t.Fatalf("byte-bounded buffer kept %+v", got)
	}
	s := newSeenSet(2)
	if !s.add("a") || s.add("a") || !s.add("b") || !s.add("c") || !s.add("a") {
		t.Fatal("seen set")
	}
}
