package logstore

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestOutputFallbackFieldsExact is the 0.7 CLI's `animus output` read-back
// (log_storage/query with source "workflow" + source_name = the workflow
// id + a limit, then a per-run split on fields.run_id) through the real
// framing, from both places an answer can come from: this process's
// read-your-writes buffer while Loki's ingestion lags, and Loki itself
// for a process that stored nothing. fields must come back byte for byte
// (key order, number literals, raw and escaped unicode, HTML characters),
// and rows of other workflows and other sources must not. The e2e twin
// (e2e/logsloki) runs the same read against the built binary.
func TestOutputFallbackFieldsExact(t *testing.T) {
	f := newLoki(t)
	writer := serve(t, New(testConfig(t, f.URL())))
	t0 := base()
	type row struct{ source, sourceName, run string }
	fixture := []row{
		{"workflow", "wf-a", "run-a1"},
		{"workflow", "wf-b", "run-b1"},
		{"daemon", "wf-a", ""},
		{"workflow", "wf-a", "run-a2"},
		{"plugin", "wf-a", ""},
		{"workflow", "wf-a", "run-a1"},
	}
	var want []string // wf-a's workflow rows' fields, oldest first
	f.HoldIngestion()
	for i, r := range fixture {
		fields := fmt.Sprintf(`{"seq":%d}`, i)
		if r.run != "" {
			fields = fmt.Sprintf(`{"run_id":%q,"source_file":"events.jsonl","run_event":{"z":%d,"a":[1.50,2e3,-0.0,12345678901234567890],"t":"é ☕ 𝄞 \u00e9 <&> %s"}}`,
				r.run, i, "\u2028")
		}
		line := fmt.Sprintf(`{"id":"e%d","ts":%q,"level":"info","source":%q,"source_name":%q,"target":"t","message":"m","fields":%s}`,
			i, t0.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), r.source, r.sourceName, fields)
		writer.kit.OK(writer.t, "log_storage/store", `{"entries":[`+line+`]}`, nil)
		if r.source == "workflow" && r.sourceName == "wf-a" {
			want = append(want, fields)
		}
	}
	// h.ok fails the test h was served for, so both reads run in t
	// itself rather than in subtests.
	read := func(h *host) {
		t.Helper()
		var res struct {
			Entries []struct {
				Fields json.RawMessage `json:"fields"`
			} `json:"entries"`
		}
		h.kit.OK(h.t, "log_storage/query", `{"source":"workflow","source_name":"wf-a","limit":1000}`, &res)
		if len(res.Entries) != len(want) {
			t.Fatalf("got %d entries, want wf-a's %d workflow rows", len(res.Entries), len(want))
		}
		runs := map[string]int{}
		for i, e := range res.Entries {
			if string(e.Fields) != want[i] {
				t.Errorf("entry %d fields:\n got %s\nwant %s", i, e.Fields, want[i])
			}
			var ev struct {
				RunID string `json:"run_id"`
			}
			if err := json.Unmarshal(e.Fields, &ev); err != nil {
				t.Fatal(err)
			}
			runs[ev.RunID]++
		}
		if runs["run-a1"] != 2 || runs["run-a2"] != 1 || len(runs) != 2 {
			t.Errorf("per-run split %v, want run-a1: 2, run-a2: 1", runs)
		}
	}
	read(writer) // Loki holds nothing yet: the buffer answers
	f.CatchUp()
	read(serve(t, New(testConfig(t, f.URL())))) // a process that stored nothing: Loki answers
}
