package logstore

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/config"
)

// TestStoreRejectsBadInput checks that a call with any invalid entry is
// answered -32602 invalid_request naming the entry, and that nothing is
// pushed: a store is all-or-nothing on validation.
func TestStoreRejectsBadInput(t *testing.T) {
	f := newLoki(t)
	h := serve(t, New(testConfig(t, f.URL())))
	ts := base().Format(time.RFC3339Nano)
	good := fmt.Sprintf(`{"id":"ok","ts":%q,"level":"info","source":"daemon","target":"t","message":"m"}`, ts)
	withField := func(k, v string) string {
		return strings.Replace(good, `"level":"info"`, `"level":"info","`+k+`":`+v, 1)
	}
	for _, c := range []struct {
		name, params, msg string
		dataKey, dataVal  string
	}{
		{"no params", "", `field "entries" is required`, "field", "entries"},
		{"null params", `null`, `field "entries" is required`, "field", "entries"},
		{"no entries", `{}`, `field "entries" is required`, "field", "entries"},
		{"entries not an array", `{"entries":{"id":"x"}}`, "", "", ""},
		{"entry not an object", `{"entries":[` + good + `,7]}`, `entries[1]: not a LogEntry object`, "index", "1"},
		{"second entry lacks target", `{"entries":[` + good + `,` + strings.Replace(good, `"target":"t",`, "", 1) + `]}`,
			`invalid params: entries[1]: field "target" is required`, "index", "1"},
		{"upper-case level", `{"entries":[` + strings.Replace(good, `"info"`, `"INFO"`, 1) + `]}`, `entries[0]: field "level" must be one of`, "index", "0"},
		{"unknown source", `{"entries":[` + strings.Replace(good, `"daemon"`, `"kernel"`, 1) + `]}`, `field "source" must be one of`, "index", "0"},
		{"ts not RFC 3339", `{"entries":[` + strings.Replace(good, ts, "2026-05-17 10:00", 1) + `]}`, `field "ts" must be an RFC 3339 timestamp`, "index", "0"},
		{"empty id", `{"entries":[` + strings.Replace(good, `"id":"ok"`, `"id":""`, 1) + `]}`, `field "id" must not be empty`, "index", "0"},
		{"source_name not a string", `{"entries":[` + withField("fields", `{"a":1}`) + `,` + withField("source_name", `5`) + `]}`, `entries[1]: not a LogEntry object`, "index", "1"},
		{"target alone over the line limit", `{"entries":[` + strings.Replace(good, `"target":"t"`, `"target":"`+strings.Repeat("t", maxLine)+`"`, 1) + `]}`,
			`does not fit in Loki's 250000-byte line limit`, "index", "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := h.kit.Fails(h.t, "log_storage/store", c.params, pluginkit.CodeInvalidParams, pluginkit.CategoryInvalidRequest)
			if !strings.Contains(e.Message, c.msg) {
				t.Errorf("message %q, want it to contain %q", e.Message, c.msg)
			}
			if c.dataKey != "" && fmt.Sprint(e.Data[c.dataKey]) != c.dataVal {
				t.Errorf("data %v, want %s=%s", e.Data, c.dataKey, c.dataVal)
			}
		})
	}
	if n := f.RequestsTo(pushPath); n != 0 {
		t.Fatalf("%d pushes reached Loki for invalid calls", n)
	}
}

// TestStoreEmptyBatch: an empty entries array is a successful no-op.
func TestStoreEmptyBatch(t *testing.T) {
	f := newLoki(t)
	h := serve(t, New(testConfig(t, f.URL())))
	var res StoreResult
	h.kit.OK(h.t, "log_storage/store", `{"entries":[]}`, &res)
	if res.Stored != 0 || f.RequestsTo(pushPath) != 0 {
		t.Fatalf("stored %d with %d pushes", res.Stored, f.RequestsTo(pushPath))
	}
}

// TestStorePushShape checks what one store call puts into Loki in each
// structured-metadata mode: a single push grouping entries by label set
// (service_name, source, level and the extra labels), the entry's own
// nanosecond timestamp, the whole entry as a compact JSON line, and id,
// target and source_name as structured metadata unless the mode is off.
func TestStorePushShape(t *testing.T) {
	t0 := base().Add(123456789 * time.Nanosecond)
	e1 := wireEntryOf("e1", t0, "info", "daemon", "", "daemon.a", `{ "b" : 2, "a" : [1, 2] }`)
	e1["message"] = "<b>&\nline two"
	e2 := wireEntryOf("e2", t0.Add(time.Second), "warn", "plugin", "animus-x", "plugin.animus-x.client", "")
	e3 := wireEntryOf("e3", t0.Add(2*time.Second), "info", "daemon", "", "daemon.b", "null")
	tsOf := func(e map[string]any) string { return e["ts"].(string) }
	wantLines := map[string]string{
		"e1": `{"id":"e1","ts":"` + tsOf(e1) + `","level":"info","source":"daemon","target":"daemon.a","message":"<b>&\nline two","fields":{"b":2,"a":[1,2]}}`,
		"e2": `{"id":"e2","ts":"` + tsOf(e2) + `","level":"warn","source":"plugin","source_name":"animus-x","target":"plugin.animus-x.client","message":"message of e2"}`,
		"e3": `{"id":"e3","ts":"` + tsOf(e3) + `","level":"info","source":"daemon","target":"daemon.b","message":"message of e3"}`,
	}
	wantSM := map[string]map[string]string{
		"e1": {"animus_id": "e1", "target": "daemon.a"},
		"e2": {"animus_id": "e2", "target": "plugin.animus-x.client", "source_name": "animus-x"},
		"e3": {"animus_id": "e3", "target": "daemon.b"},
	}
	for _, mode := range []config.SMMode{config.SMAuto, config.SMOn, config.SMOff} {
		t.Run(string(mode), func(t *testing.T) {
			f := newLoki(t)
			svc := New(testConfig(t, f.URL(), config.EnvStructuredMeta, string(mode),
				config.EnvServiceName, "svc-x", config.EnvExtraLabels, "host=a, env=prod"))
			mustStore(t, svc, e1, e2, e3)
			if n := f.RequestsTo(pushPath); n != 1 {
				t.Fatalf("%d pushes, want one per call", n)
			}
			if streams := f.StreamsPerPush(); !reflect.DeepEqual(streams, []int{2}) {
				t.Errorf("streams per push %v, want [2] (daemon/info and plugin/warn)", streams)
			}
			got := stored(f)
			if len(got) != 3 {
				t.Fatalf("Loki holds %d entries", len(got))
			}
			for _, e := range got {
				var id struct{ ID, TS, Level, Source string }
				if err := json.Unmarshal([]byte(e.Line), &id); err != nil {
					t.Fatalf("line %q: %v", e.Line, err)
				}
				if e.Line != wantLines[id.ID] {
					t.Errorf("line\n got %s\nwant %s", e.Line, wantLines[id.ID])
				}
				if ts, _ := time.Parse(time.RFC3339Nano, id.TS); e.TS.UnixNano() != ts.UnixNano() {
					t.Errorf("%s: Loki timestamp %d, want the entry's own %d", id.ID, e.TS.UnixNano(), ts.UnixNano())
				}
				wantLabels := map[string]string{"service_name": "svc-x", "source": id.Source, "level": id.Level, "env": "prod", "host": "a"}
				if !reflect.DeepEqual(e.labels, wantLabels) {
					t.Errorf("%s: labels %v, want %v", id.ID, e.labels, wantLabels)
				}
				want := wantSM[id.ID]
				if mode == config.SMOff {
					want = nil
				}
				if len(e.SM) != len(want) || (len(want) > 0 && !reflect.DeepEqual(e.SM, want)) {
					t.Errorf("%s: structured metadata %v, want %v", id.ID, e.SM, want)
				}
			}
		})
	}
}

// TestStoreTruncatesOversizedEntry: an entry over Loki's line limit is
// stored with a cut message and fields._animus_truncated, and what this
// process's buffer returns is exactly what Loki returns to another one.
func TestStoreTruncatesOversizedEntry(t *testing.T) {
	f := newLoki(t)
	writer, reader := New(testConfig(t, f.URL())), New(testConfig(t, f.URL()))
	big := wireEntryOf("big", base(), "info", "daemon", "", "daemon.big", `{"k":"v"}`)
	long := strings.Repeat("x", 2*maxLine)
	big["message"] = long

	f.HoldIngestion() // only the buffer can answer the writer
	mustStore(t, writer, big)
	fromBuffer := mustQuery(t, writer, QueryParams{})
	f.CatchUp()
	fromLoki := mustQuery(t, reader, QueryParams{})

	if len(fromBuffer.Entries) != 1 || !reflect.DeepEqual(fromBuffer, fromLoki) {
		t.Fatalf("buffer %+v\nLoki %+v", fromBuffer, fromLoki)
	}
	e := fromLoki.Entries[0]
	var fields map[string]any
	if err := json.Unmarshal(e.Fields, &fields); err != nil {
		t.Fatal(err)
	}
	if len(e.Message) == 0 || len(e.Message) >= len(long) || !strings.HasPrefix(long, e.Message) ||
		fields["k"] != "v" || fields[truncatedKey] != true {
		t.Fatalf("message of %d bytes, fields %s", len(e.Message), e.Fields)
	}
	if line := stored(f)[0].Line; len(line) > maxLine {
		t.Fatalf("line of %d bytes is over the %d limit", len(line), maxLine)
	}
}

// TestStoreStructuredMetadataRefused: when Loki refuses structured
// metadata, auto mode resends without it once and stays in parser mode
// (entries remain findable by source_name and target); on mode reports
// Loki's refusal as bad input without degrading health.
func TestStoreStructuredMetadataRefused(t *testing.T) {
	entry := func(id string) map[string]any {
		return wireEntryOf(id, base(), "info", "plugin", "animus-x", "plugin.animus-x.run", "")
	}
	t.Run("auto", func(t *testing.T) {
		f := fakeloki.New(t, fakeloki.Options{DisallowStructuredMetadata: true})
		svc := New(testConfig(t, f.URL()))
		mustStore(t, svc, entry("a"))
		mustStore(t, svc, entry("b"))
		if n := f.RequestsTo(pushPath); n != 3 {
			t.Fatalf("%d pushes, want 3 (refused, resent, then straight without metadata)", n)
		}
		for _, e := range stored(f) {
			if len(e.SM) != 0 {
				t.Fatalf("stored with structured metadata %v", e.SM)
			}
		}
		other := New(testConfig(t, f.URL()))
		got := mustQuery(t, other, QueryParams{SourceName: sp("animus-x"), TargetGlob: sp("plugin.*.run")})
		if !reflect.DeepEqual(ids(got.Entries), []string{"a", "b"}) {
			t.Fatalf("query found %v", ids(got.Entries))
		}
	})
	t.Run("on", func(t *testing.T) {
		f := fakeloki.New(t, fakeloki.Options{DisallowStructuredMetadata: true})
		h := serve(t, New(testConfig(t, f.URL(), config.EnvStructuredMeta, "on")))
		e := h.kit.Fails(h.t, "log_storage/store", storeParams(t, entry("a")), pluginkit.CodeInvalidParams, pluginkit.CategoryInvalidRequest)
		if !strings.HasPrefix(e.Message, "store rejected by Loki: ") || !strings.Contains(e.Message, "structured metadata") ||
			fmt.Sprint(e.Data["http_status"]) != "400" {
			t.Fatalf("error %q %v", e.Message, e.Data)
		}
		if n := f.RequestsTo(pushPath); n != 1 {
			t.Fatalf("%d pushes, want 1", n)
		}
		var health struct{ Status string }
		h.kit.OK(h.t, "health/check", nil, &health)
		if health.Status != "healthy" {
			t.Fatalf("health %s after a refused entry, want healthy", health.Status)
		}
	})
}
