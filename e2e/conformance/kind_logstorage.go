package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/logwire"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// logStorageScenarios ports the testkit's log-storage suite (logs-loki.md
// §5) and adds the one error rule §2 states outright.
func logStorageScenarios() []Scenario {
	return []Scenario{
		{"log-storage", "handshake", scenarioKindHandshake("log_storage_backend")},
		{"log-storage", "schema-health", scenarioLogSchemaHealth},
		{"log-storage", "store-query-round-trip", scenarioStoreQuery},
		{"log-storage", "tail-replay", scenarioTailReplay},
		// Beyond the testkit.
		{"log-storage", "query-since-after-until-invalid", scenarioSinceAfterUntil},
	}
}

// logSourceName is the source_name of the testkit's entries and filter.
const logSourceName = "log-storage-conformance"

// logSpawn is testkitSpawn plus what only this suite does: cwd is a temp
// dir the scenario owns and ANIMUS_LOG_FILE_PATH=<dir>/events.jsonl.
func logSpawn(ctx context.Context, s *Session) (*fakehost.Host, *fakehost.InitializeResult, error) {
	dir, err := s.TempDir()
	if err != nil {
		return nil, nil, err
	}
	return testkitSpawn(ctx, s, func(c *fakehost.Config) {
		c.Dir = dir
		c.Extra = map[string]string{"ANIMUS_LOG_FILE_PATH": filepath.Join(dir, "events.jsonl")}
	})
}

// logEntry is the wire LogEntry.
type logEntry = logwire.Entry

// testkitEntry is the testkit's fresh entry for a scenario (logs-loki.md §5):
// id "testkit-<suffix>-<unix nanos>", ts now, the target embedding the id.
func testkitEntry(suffix, message string) logEntry {
	now := time.Now().UTC()
	id := fmt.Sprintf("testkit-%s-%d", suffix, now.UnixNano())
	return logEntry{
		ID: id, TS: chronoRFC3339(now), Level: "info", Source: "plugin", SourceName: logSourceName,
		Target: "testkit.log_storage." + id, Message: message,
		Fields: json.RawMessage(`{"suite":"log-storage-conformance"}`),
	}
}

// chronoRFC3339 renders t as serde's DateTime<Utc> does: "Z", and a
// fraction of 3, 6 or 9 digits only when non-zero.
func chronoRFC3339(t time.Time) string {
	ns := t.Nanosecond()
	switch {
	case ns == 0:
		return t.Format("2006-01-02T15:04:05Z")
	case ns%1_000_000 == 0:
		return t.Format("2006-01-02T15:04:05.000Z")
	case ns%1_000 == 0:
		return t.Format("2006-01-02T15:04:05.000000Z")
	}
	return t.Format("2006-01-02T15:04:05.000000000Z")
}

// testkitFilter is the LogQuery of query and tail: only source_name, the
// entry's exact target as the glob, limit 5 and follow false.
func testkitFilter(id string) any {
	return struct {
		SourceName string `json:"source_name"`
		TargetGlob string `json:"target_glob"`
		Limit      int    `json:"limit"`
		Follow     bool   `json:"follow"`
	}{logSourceName, "testkit.log_storage." + id, 5, false}
}

// decodeLogEntry is serde's LogEntry decoding: the schema, plus the
// timestamp parse the schema's "format" does not enforce.
func decodeLogEntry(set *schemacheck.Set, raw json.RawMessage) (logEntry, error) {
	var e logEntry
	if err := set.Validate(schemacheck.LogStorageProtocol, "LogEntry", raw); err != nil {
		return e, err
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, err
	}
	if _, err := time.Parse(time.RFC3339Nano, e.TS); err != nil {
		return e, fmt.Errorf("ts %q is not RFC 3339: %v", e.TS, err)
	}
	return e, nil
}

// scenarioLogSchemaHealth (logs-loki.md §5 scenario 2): log_storage/schema
// (id 2) decodes as LogStorageSchema; health/check (id 3) has a status key;
// supports_query and supports_tail equal whether log_storage/query and
// log_storage/tail are in this process's initialize capabilities.methods.
func scenarioLogSchemaHealth(ctx context.Context, s *Session) Outcome {
	h, res, err := logSpawn(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	raw, err := testkitCall(ctx, h, shortCallBudget, "log_storage/schema", json.RawMessage(`{}`))
	if err != nil {
		return failf("log_storage/schema: %v", err)
	}
	var schema struct {
		SupportsQuery bool `json:"supports_query"`
		SupportsTail  bool `json:"supports_tail"`
	}
	if err := s.Schemas.Validate(schemacheck.LogStorageProtocol, "LogStorageSchema", raw); err != nil {
		return failf("log_storage/schema returned invalid schema: %v; value=%s", err, short(raw))
	}
	_ = json.Unmarshal(raw, &schema)
	health, err := testkitCall(ctx, h, shortCallBudget, "health/check", json.RawMessage(`{}`))
	if err != nil {
		return failf("health/check: %v", err)
	}
	var hs map[string]json.RawMessage
	if json.Unmarshal(health, &hs) != nil || hs["status"] == nil {
		return failf("health/check missing status: %s", short(health))
	}
	query, tail := contains(res.Capabilities.Methods, "log_storage/query"), contains(res.Capabilities.Methods, "log_storage/tail")
	if schema.SupportsQuery != query {
		return failf("schema supports_query=%v but capabilities advertise query=%v", schema.SupportsQuery, query)
	}
	if schema.SupportsTail != tail {
		return failf("schema supports_tail=%v but capabilities advertise tail=%v", schema.SupportsTail, tail)
	}
	return pass()
}

// scenarioStoreQuery (logs-loki.md §5 scenario 3): store one fresh entry
// (id 2), query with the testkit filter (id 3); the result decodes as
// LogQueryResult with every entry a valid LogEntry and contains the stored
// id. It runs whatever the plugin advertises: a write-only sink fails it.
func scenarioStoreQuery(ctx context.Context, s *Session) Outcome {
	h, _, err := logSpawn(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	entry := testkitEntry("store-query", "store/query conformance event")
	if _, err := testkitCall(ctx, h, shortCallBudget, "log_storage/store", map[string]any{"entries": []logEntry{entry}}); err != nil {
		return failf("log_storage/store: %v", err)
	}
	raw, err := testkitCall(ctx, h, shortCallBudget, "log_storage/query", testkitFilter(entry.ID))
	if err != nil {
		return failf("log_storage/query: %v", err)
	}
	var result struct {
		Entries []json.RawMessage `json:"entries"`
	}
	if err := s.Schemas.Validate(schemacheck.LogStorageProtocol, "LogQueryResult", raw); err != nil {
		return failf("log_storage/query: decode LogQueryResult: %v", err)
	}
	_ = json.Unmarshal(raw, &result)
	found := false
	for i, e := range result.Entries {
		got, err := decodeLogEntry(s.Schemas, e)
		if err != nil {
			return failf("log_storage/query: decode LogQueryResult: entries[%d]: %v", i, err)
		}
		found = found || got.ID == entry.ID
	}
	if !found {
		return failf("query result did not include stored id %s", entry.ID)
	}
	return pass()
}

// tailRequestID is the tail's id: initialize is 1, the store 2.
const tailRequestID = "3"

// scenarioTailReplay (logs-loki.md §5 scenario 4): skipped unless this
// process advertises log_storage/tail. Store a fresh entry (id 2), tail with
// the filter (id 3, follow:false); within 3 s the reply must succeed and a
// log_storage/event whose params.id is 3 (the same JSON number) must carry
// an entry. Events for other ids or without entry are ignored, one with
// error fails; events before the ack overwrite each other. PASS iff the
// counted entry has the stored id.
func scenarioTailReplay(ctx context.Context, s *Session) Outcome {
	h, res, err := logSpawn(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	if !contains(res.Capabilities.Methods, "log_storage/tail") {
		return skipf("plugin does not advertise log_storage/tail")
	}
	entry := testkitEntry("tail-replay", "tail replay conformance event")
	if _, err := testkitCall(ctx, h, shortCallBudget, "log_storage/store", map[string]any{"entries": []logEntry{entry}}); err != nil {
		return failf("log_storage/store: %v", err)
	}
	tctx, cancel := context.WithTimeout(ctx, shortCallBudget)
	defer cancel()
	sendAsync(tctx, h, tailRequestID, "log_storage/tail", testkitFilter(entry.ID))
	for {
		resp, notes, lost, ok := snapshot(h, tailRequestID)
		if !ok {
			continue
		}
		got, done, err := replayTail(s.Schemas, resp, notes)
		switch {
		case err != nil:
			return failf("log_storage/tail: %v", err)
		case done && got.ID != entry.ID:
			return failf("tail replay emitted id %s, expected %s", got.ID, entry.ID)
		case done:
			return pass()
		}
		if err := garbageError(h); err != nil {
			return failf("log_storage/tail: %v", err)
		}
		switch {
		case lost:
			return failf("log_storage/tail: plugin stdout closed")
		case tctx.Err() != nil && resp == nil:
			return failf("log_storage/tail: tail request was not acknowledged within deadline")
		case tctx.Err() != nil:
			return failf("tail replay did not emit stored id %s within 3 s", entry.ID)
		}
		time.Sleep(pollInterval)
	}
}

// replayTail runs the testkit's tail_once read loop over what has arrived so
// far, in arrival order: done once the ack and an event were both seen.
func replayTail(set *schemacheck.Set, resp *fakehost.Response, notes []fakehost.Notification) (logEntry, bool, error) {
	var events []fakehost.Notification
	for _, n := range notes {
		if n.Method == "log_storage/event" {
			events = append(events, n)
		}
	}
	// The reply goes in before the first event that arrived after it.
	replyAt := len(events)
	if resp != nil {
		replyAt = sort.Search(len(events), func(i int) bool { return events[i].At.After(resp.At) })
	}
	acked, have := false, false
	var got logEntry
	for i := 0; i <= len(events); i++ {
		if i == replyAt && resp != nil {
			if resp.Error != nil {
				return got, false, fmt.Errorf("log_storage/tail returned error: %s (code %d)", resp.Error.Message, resp.Error.Code)
			}
			acked = true
			if have {
				return got, true, nil
			}
		}
		if i == len(events) {
			break
		}
		var p map[string]json.RawMessage
		_ = json.Unmarshal(events[i].Params, &p)
		if !bytes.Equal(compactJSON(p["id"]), []byte(tailRequestID)) {
			continue
		}
		if e, ok := p["error"]; ok {
			return got, false, fmt.Errorf("tail stream error: %s", short(e))
		}
		raw, ok := p["entry"]
		if !ok {
			continue
		}
		e, err := decodeLogEntry(set, raw)
		if err != nil {
			return got, false, fmt.Errorf("decode log_storage/event entry: %v", err)
		}
		got, have = e, true
		if acked {
			return got, true, nil
		}
	}
	return got, false, nil
}

// scenarioSinceAfterUntil (logs-loki.md §2 Errors "InvalidRequest (e.g.
// since > until) -32602", §4, §6.6): a query whose since is after its until
// is refused with -32602 and data.category invalid_request. Only backends
// that advertise query and by_time_range evaluate since/until at all; the
// others skip (hosts must not call query when supports_query is false).
func scenarioSinceAfterUntil(ctx context.Context, s *Session) Outcome {
	if !s.Advertises("log_storage/query") {
		return skipf("plugin does not advertise log_storage/query")
	}
	h, out, ok := ready(ctx, s)
	if !ok {
		return out
	}
	resp, err := call(ctx, h, shortCallBudget, "log_storage/schema", nil)
	if err != nil {
		return failf("%v", err)
	}
	var schema struct {
		SupportsQuery     bool `json:"supports_query"`
		SupportsFiltering struct {
			ByTimeRange bool `json:"by_time_range"`
		} `json:"supports_filtering"`
	}
	if err := wantResult(resp, &schema); err != nil {
		return failf("%v", err)
	}
	if !schema.SupportsQuery || !schema.SupportsFiltering.ByTimeRange {
		return skipf("schema does not claim query with by_time_range")
	}
	resp, err = call(ctx, h, shortCallBudget, "log_storage/query",
		map[string]any{"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z", "limit": 5})
	if err != nil {
		return failf("%v", err)
	}
	if err := wantError(resp, -32602, "invalid_request"); err != nil {
		return failf("query with since after until: %v", err)
	}
	return pass()
}
