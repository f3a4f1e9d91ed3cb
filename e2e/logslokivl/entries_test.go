package logslokivl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/internal/logwire"
	"github.com/animus-plugins/animus-plugins/e2e/victorialogs"
)

// logEntry is the wire LogEntry.
type logEntry = logwire.Entry

// entryKeys are the only keys a LogEntry line may hold.
var entryKeys = map[string]bool{"id": true, "ts": true, "level": true, "source": true,
	"source_name": true, "target": true, "message": true, "fields": true}

// sampleEntries are entries of every shape the daemon and plugins send,
// timed just before now (VictoriaLogs rejects entries outside its
// retention), with a per-run prefix on ids and targets. Between them they
// cover: the daemon's projection (+00:00 offset, microseconds, no
// source_name, nested fields), nanosecond timestamps, a ts in another
// offset, multi-line and non-ASCII messages, quotes and backslashes in
// source_name, and an entry without fields.
func sampleEntries(run string, base time.Time) []logEntry {
	at := func(offset time.Duration) time.Time { return base.Add(offset) }
	return []logEntry{
		{ID: run + "-daemon", TS: at(0).Format("2006-01-02T15:04:05.000000-07:00"), Level: "info", Source: "daemon",
			Target: "daemon.events.workflow-completed", Message: "workflow-completed",
			Fields: json.RawMessage(`{"seq":41,"data":{"workflow_id":"wf-7","phase":"review"},"schema":"animus.daemon.event.v1","project_root":"/srv/p"}`)},
		{ID: run + "-plugin", TS: at(1*time.Millisecond + 123).UTC().Format(time.RFC3339Nano), Level: "warn", Source: "plugin",
			SourceName: "animus-subject-linear", Target: "plugin.animus-subject-linear.client",
			Message: "listed 14 issues\nsecond line — ünïcödé ✓", Fields: json.RawMessage(`{"count":14,"tags":["a","b"]}`)},
		{ID: run + "-workflow", TS: at(2*time.Millisecond + 999_999).In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano), Level: "error", Source: "workflow",
			SourceName: `wf "quoted" \ back`, Target: "workflow.wf-7.step_3", Message: `failed: exit 1 {"x":1}`,
			Fields: json.RawMessage(`[1,"two",null]`)},
		{ID: run + "-cli", TS: at(3*time.Millisecond + 1).UTC().Format(time.RFC3339Nano), Level: "trace", Source: "cli",
			Target: "cli.main", Message: "no fields here"},
	}
}

// reporter is the part of testing.T the row checks use, so a test can
// run them against a recorder and assert that they fail.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}

// recorder is a reporter that only remembers failures; Fatalf unwinds
// with errStop, which run recovers.
type recorder struct{ msgs []string }

type stopSignal struct{}

func (r *recorder) Helper()                      {}
func (r *recorder) Logf(string, ...any)          {}
func (r *recorder) Errorf(f string, args ...any) { r.msgs = append(r.msgs, fmt.Sprintf(f, args...)) }
func (r *recorder) Fatalf(f string, args ...any) { r.Errorf(f, args...); panic(stopSignal{}) }

// run calls fn with r, stopping quietly at a Fatalf.
func (r *recorder) run(fn func(reporter)) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(stopSignal); !ok {
				panic(v)
			}
		}
	}()
	fn(r)
}

// runID is a short unique prefix so rows of reruns never match.
func runID() string { return "vl" + strconv.FormatInt(time.Now().UnixNano(), 36) }

// mapping is how the plugin is configured to place entries.
type mapping struct {
	serviceName string
	extra       map[string]string // LOKI_EXTRA_LABELS
	sm          bool              // structured metadata sent
}

// labels are the stream labels expected for e.
func (m mapping) labels(e logEntry) map[string]string {
	ls := map[string]string{"service_name": m.serviceName, "source": e.Source, "level": e.Level}
	for k, v := range m.extra {
		ls[k] = v
	}
	return ls
}

// metadata is the structured metadata expected for e.
func (m mapping) metadata(e logEntry) map[string]string {
	if !m.sm {
		return nil
	}
	sm := map[string]string{"animus_id": e.ID, "target": e.Target}
	if e.SourceName != "" {
		sm["source_name"] = e.SourceName
	}
	return sm
}

// streamString is VictoriaLogs' _stream for a label set: names sorted,
// values quoted with Go-style escapes.
func streamString(ls map[string]string) string {
	names := make([]string, 0, len(ls))
	for n := range ls {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.Quote(ls[n])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// checkRows matches rows to entries by animus id (taken from the line, so
// it works with structured metadata off too) and checks each against
// the mapping. Exactly one row per entry: no loss, no duplicates.
func checkRows(t reporter, m mapping, entries []logEntry, rows []victorialogs.Row) {
	t.Helper()
	if len(rows) != len(entries) {
		for _, r := range rows {
			t.Logf("row: %v", map[string]string(r))
		}
		t.Fatalf("%d rows stored, want %d (one per entry)", len(rows), len(entries))
	}
	byID := map[string]victorialogs.Row{}
	for _, r := range rows {
		var e logEntry
		if err := json.Unmarshal([]byte(r["_msg"]), &e); err != nil {
			t.Fatalf("_msg is not a LogEntry: %v: %q", err, r["_msg"])
		}
		if _, dup := byID[e.ID]; dup {
			t.Fatalf("two rows for id %q", e.ID)
		}
		byID[e.ID] = r
	}
	for _, e := range entries {
		r, ok := byID[e.ID]
		if !ok {
			t.Errorf("no row for entry %q", e.ID)
			continue
		}
		checkRow(t, m, e, r)
	}
}

// checkRow asserts one stored row against the entry it came from.
func checkRow(t reporter, m mapping, e logEntry, r victorialogs.Row) {
	t.Helper()
	ls, sm := m.labels(e), m.metadata(e)
	if got, want := r["_stream"], streamString(ls); got != want {
		t.Errorf("%s: _stream %s, want %s (stream labels exactly service_name, source, level + extra)", e.ID, got, want)
	}
	wantFields := map[string]string{}
	for k, v := range ls {
		wantFields[k] = v
	}
	for k, v := range sm {
		wantFields[k] = v
	}
	gotFields := map[string]string{}
	for k, v := range r {
		switch k {
		case "_msg", "_time", "_stream", "_stream_id":
		default:
			gotFields[k] = v
		}
	}
	if !reflect.DeepEqual(gotFields, wantFields) {
		t.Errorf("%s: fields (labels + structured metadata)\n got %v\nwant %v", e.ID, gotFields, wantFields)
	}

	want, err := time.Parse(time.RFC3339Nano, e.TS)
	if err != nil {
		t.Fatalf("bad sample ts %q: %v", e.TS, err)
	}
	if got, err := r.Time(); err != nil || got.UnixNano() != want.UnixNano() {
		t.Errorf("%s: _time %s (%v), want %s = %d ns", e.ID, r["_time"], err, e.TS, want.UnixNano())
	}

	checkLine(t, e, r["_msg"])
}

// checkLine asserts the Loki line is one compact JSON object, holding only
// LogEntry keys, that decodes to e (ts as the same instant, fields as the
// same JSON value).
func checkLine(t reporter, e logEntry, line string) {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(line)); err != nil || compact.String() != line {
		t.Errorf("%s: line is not compact JSON (%v): %q", e.ID, err, line)
		return
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &keys); err != nil {
		t.Errorf("%s: line is not a JSON object: %q", e.ID, line)
		return
	}
	for k := range keys {
		if !entryKeys[k] {
			t.Errorf("%s: line has key %q, not a LogEntry field: %q", e.ID, k, line)
		}
	}
	var got logEntry
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Errorf("%s: line does not decode as a LogEntry: %v", e.ID, err)
		return
	}
	gotTS, err1 := time.Parse(time.RFC3339Nano, got.TS)
	wantTS, err2 := time.Parse(time.RFC3339Nano, e.TS)
	if err1 != nil || err2 != nil || !gotTS.Equal(wantTS) {
		t.Errorf("%s: line ts %q, want the instant %q", e.ID, got.TS, e.TS)
	}
	if !jsonEqual(got.Fields, e.Fields) {
		t.Errorf("%s: line fields %s, want %s", e.ID, got.Fields, e.Fields)
	}
	got.TS, got.Fields = e.TS, e.Fields
	if !reflect.DeepEqual(got, e) {
		t.Errorf("%s: line decodes to %+v, want %+v", e.ID, got, e)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
