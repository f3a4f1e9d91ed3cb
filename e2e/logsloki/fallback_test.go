package logsloki

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/fakeloki"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// The 0.7 CLI (rc.43, animus-cli #392) reads a run's transcript back
// through log_storage/query when runs/<run_id>/ is gone: `animus output
// read|jsonl|monitor|cli` spawn the log-storage backend with the generic
// handshake, send one bounded query, shut it down, then keep the rows of
// the run (fields.run_id), sorted by time, and turn fields.source_file and
// fields.run_event back into jsonl rows. The writer contract: source
// "workflow", source_name = the workflow id. The exact query params are
// not published; animus-0.7.md §7 reads the PR as source + source_name +
// a limit, which is what fallbackQuery sends.

// transcriptRow is one entry the runner wrote for a run.
type transcriptRow struct {
	workflow, run string
	fields        string // exactly as the writer serialised it
}

// transcriptFields renders fields as serde_json writes them (compact, keys
// in insertion order, numbers as written, non-ASCII unescaped). The
// variations are what a lossy backend would break: keys not in sorted
// order (run_id is not first, "z" precedes "a"), numbers that do not
// survive a float64 or int64 (1.50, 2e3, -0.0, 20 digits, 1e400), raw
// multi-byte UTF-8 (incl. a 4-byte rune and U+2028) beside \u escapes,
// HTML-significant characters, empty containers and null.
func transcriptFields(run, sourceFile string, seq int) string {
	return fmt.Sprintf(`{"source_file":%q,"run_id":%q,"run_event":{"z":%d,"a":[1.50,2e3,-0.0,12345678901234567890,1e400],`+
		`"type":"assistant","text":"café ☕ 𝄞 \u00e9\ud83d\ude00 <&> `+"\u2028"+` \"q\" \\ end","meta":{},"list":[],"none":null}}`,
		sourceFile, run, seq)
}

// logLine renders a LogEntry as the daemon's Rust writer does: compact,
// in the upstream struct's field order, fields verbatim.
func logLine(id string, ts time.Time, level, source, sourceName, target, message, fields string) json.RawMessage {
	var b strings.Builder
	fmt.Fprintf(&b, `{"id":%q,"ts":%q,"level":%q,"source":%q,`, id, ts.UTC().Format(time.RFC3339Nano), level, source)
	if sourceName != "" {
		fmt.Fprintf(&b, `"source_name":%q,`, sourceName)
	}
	fmt.Fprintf(&b, `"target":%q,"message":%q`, target, message)
	if fields != "" {
		b.WriteString(`,"fields":` + fields)
	}
	b.WriteString("}")
	return json.RawMessage(b.String())
}

// transcriptFixture stores, one entry per store call as the daemon does,
// the transcripts of two runs of workflow A and one of workflow B,
// interleaved in time, plus rows of other sources: a daemon row and a
// plugin row carrying workflow A's id as source_name, and a CLI row.
// It returns workflow A's id and its rows, oldest first.
func transcriptFixture(t *testing.T, b *backend) (string, []transcriptRow) {
	t.Helper()
	wfA, wfB := b.uniq+"-7f3c", b.uniq+"-9d21"
	runA1, runA2, runB1 := "wf-"+wfA+"-triage-1", "wf-"+wfA+"-implement-2", "wf-"+wfB+"-triage-1"
	writer := b.start(nil)
	base := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	var rows []transcriptRow
	for i, r := range []struct{ workflow, run, source, sourceName, file string }{
		{wfA, runA1, "workflow", wfA, "events.jsonl"},
		{wfB, runB1, "workflow", wfB, "events.jsonl"},
		{wfA, runA2, "workflow", wfA, "events.jsonl"},
		{"", "", "daemon", wfA, ""},
		{wfA, runA1, "workflow", wfA, "output.jsonl"},
		{"", "", "plugin", wfA, ""},
		{wfA, runA2, "workflow", wfA, "output.jsonl"},
		{wfB, runB1, "workflow", wfB, "output.jsonl"},
		{"", "", "cli", "", ""},
		{wfA, runA1, "workflow", wfA, "events.jsonl"},
		{wfA, runA2, "workflow", wfA, "events.jsonl"},
	} {
		// Nanosecond offsets: the order must come from the timestamps,
		// not from the second they fall in.
		ts := base.Add(time.Duration(i)*time.Second + time.Duration(i*7919))
		id := fmt.Sprintf("%s-%02d", b.uniq, i)
		fields := `{"seq":` + fmt.Sprint(i) + `}`
		if r.run != "" {
			fields = transcriptFields(r.run, r.file, i)
		}
		line := logLine(id, ts, "info", r.source, r.sourceName, r.source+".run", "row "+fmt.Sprint(i), fields)
		e2etest.Call(t, writer, "log_storage/store", json.RawMessage(`{"entries":[`+string(line)+`]}`))
		if r.workflow == wfA {
			rows = append(rows, transcriptRow{workflow: wfA, run: r.run, fields: fields})
		}
	}
	return wfA, rows
}

// TestOutputFallbackReadsTranscripts is the 0.7 CLI's read-back: every
// query runs in a fresh process (the read-your-writes buffer is empty, so
// Loki answers), spawned with the 0.7 generic handshake, and is shut down
// by the daemon's ladder. It must return exactly workflow A's workflow
// rows, oldest first, each with fields byte for byte as written; the
// per-run split the CLI does client-side must then give each run's rows
// in order. Every read mode renders its own LogQL, so each is checked.
func TestOutputFallbackReadsTranscripts(t *testing.T) {
	b := newBackend(t, fakeloki.Options{})
	wfA, rows := transcriptFixture(t, b)
	for _, mode := range []string{"on", "auto", "off"} {
		t.Run("structured metadata "+mode, func(t *testing.T) {
			got := fallbackQuery(t, b, mode, wfA, 1000)
			if len(got) != len(rows) {
				t.Fatalf("got %d entries, want workflow %s's %d rows:\n%s", len(got), wfA, len(rows), dump(got))
			}
			for i, e := range got {
				if e.Source != "workflow" || e.SourceName != wfA {
					t.Errorf("entry %d is source %q source_name %q, want workflow %q", i, e.Source, e.SourceName, wfA)
				}
				if i > 0 && e.TS < got[i-1].TS {
					t.Errorf("entry %d (%s) is older than entry %d (%s): not oldest first", i, e.TS, i-1, got[i-1].TS)
				}
				if string(e.Fields) != rows[i].fields {
					t.Errorf("entry %d fields changed:\n got %s\nwant %s", i, e.Fields, rows[i].fields)
				}
			}
			checkPerRun(t, got, rows)
		})
	}
	t.Run("bounded read keeps the newest", func(t *testing.T) {
		got := fallbackQuery(t, b, "auto", wfA, 3)
		want := rows[len(rows)-3:]
		if len(got) != 3 {
			t.Fatalf("limit 3 returned %d entries:\n%s", len(got), dump(got))
		}
		for i := range got {
			if string(got[i].Fields) != want[i].fields {
				t.Errorf("entry %d:\n got %s\nwant %s", i, got[i].Fields, want[i].fields)
			}
		}
	})
}

// fallbackEntry is a returned LogEntry with its fields kept as raw bytes.
type fallbackEntry struct {
	TS         string          `json:"ts"`
	Source     string          `json:"source"`
	SourceName string          `json:"source_name"`
	Fields     json.RawMessage `json:"fields"`
}

// fallbackQuery is one `animus output` invocation: spawn (0.7 generic
// handshake), one log_storage/query, shutdown.
func fallbackQuery(t *testing.T, b *backend, mode, workflow string, limit int) []fallbackEntry {
	t.Helper()
	env := map[string]string{"LOKI_STRUCTURED_METADATA": mode}
	for k, v := range b.env {
		env[k] = v
	}
	h := e2etest.Spawn(t, binary, e2etest.Options{Env: env, Daemon: fakehost.Daemon07,
		Handshake: fakehost.Daemon07.Handshake("log_storage_backend")})
	res := e2etest.Decode[struct {
		Entries []fallbackEntry `json:"entries"`
	}](t, e2etest.Call(t, h, "log_storage/query", map[string]any{"source": "workflow", "source_name": workflow, "limit": limit}))
	e2etest.Shutdown(t, h, fakehost.LadderDaemon)
	return res.Entries
}

// checkPerRun splits the rows by fields.run_id as the CLI does and
// requires each run's rows, in order, with run_event byte for byte.
func checkPerRun(t *testing.T, got []fallbackEntry, rows []transcriptRow) {
	t.Helper()
	type event struct {
		RunID      string          `json:"run_id"`
		SourceFile string          `json:"source_file"`
		RunEvent   json.RawMessage `json:"run_event"`
	}
	split := func(fields []string) map[string][]string {
		out := map[string][]string{}
		for _, f := range fields {
			ev := e2etest.Decode[event](t, json.RawMessage(f))
			out[ev.RunID] = append(out[ev.RunID], ev.SourceFile+" "+string(ev.RunEvent))
		}
		return out
	}
	var gotFields, wantFields []string
	for i := range got {
		gotFields, wantFields = append(gotFields, string(got[i].Fields)), append(wantFields, rows[i].fields)
	}
	gotRuns, wantRuns := split(gotFields), split(wantFields)
	if len(gotRuns) != 2 || len(wantRuns) != 2 {
		t.Fatalf("runs: got %d, want 2 (the fixture has two runs of the workflow)", len(gotRuns))
	}
	for run, want := range wantRuns {
		if strings.Join(gotRuns[run], "\n") != strings.Join(want, "\n") {
			t.Errorf("run %s:\n got %q\nwant %q", run, gotRuns[run], want)
		}
	}
}

func dump(es []fallbackEntry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "  %s %s %s %s\n", e.TS, e.Source, e.SourceName, e.Fields)
	}
	return b.String()
}
