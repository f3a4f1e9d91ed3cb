package logstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/logql"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/loki"
)

// Entry is the wire LogEntry, in the upstream struct's field order (which
// is also the order of the JSON line stored in Loki).
type Entry struct {
	ID         string          `json:"id"`
	TS         string          `json:"ts"`
	Level      string          `json:"level"`
	Source     string          `json:"source"`
	SourceName *string         `json:"source_name,omitempty"`
	Target     string          `json:"target"`
	Message    string          `json:"message"`
	Fields     json.RawMessage `json:"fields,omitempty"`
}

// record is an entry with its timestamp in Unix nanoseconds.
type record struct {
	NS    int64
	Entry Entry
}

func (r record) sourceName() string {
	if r.Entry.SourceName == nil {
		return ""
	}
	return *r.Entry.SourceName
}

// wireEntry decodes a LogEntry strictly enough to tell a missing field
// from an empty one.
type wireEntry struct {
	ID         *string         `json:"id"`
	TS         *string         `json:"ts"`
	Level      *string         `json:"level"`
	Source     *string         `json:"source"`
	SourceName *string         `json:"source_name"`
	Target     *string         `json:"target"`
	Message    *string         `json:"message"`
	Fields     json.RawMessage `json:"fields"`
}

// parseEntry validates a LogEntry as the host's Rust types would decode
// it, and returns it with its timestamp in nanoseconds.
func parseEntry(raw json.RawMessage) (record, error) {
	var w wireEntry
	if err := json.Unmarshal(raw, &w); err != nil {
		return record{}, fmt.Errorf("not a LogEntry object: %v", err)
	}
	for name, v := range map[string]*string{"id": w.ID, "ts": w.TS, "level": w.Level, "source": w.Source, "target": w.Target, "message": w.Message} {
		if v == nil {
			return record{}, fmt.Errorf("field %q is required", name)
		}
	}
	if *w.ID == "" {
		return record{}, fmt.Errorf(`field "id" must not be empty`)
	}
	ts, err := time.Parse(time.RFC3339Nano, *w.TS)
	if err != nil {
		return record{}, fmt.Errorf(`field "ts" must be an RFC 3339 timestamp, got %q`, *w.TS)
	}
	if logql.LevelRank(*w.Level) < 0 {
		return record{}, fmt.Errorf(`field "level" must be one of trace, debug, info, warn, error, got %q`, *w.Level)
	}
	if !logql.ValidSource(*w.Source) {
		return record{}, fmt.Errorf(`field "source" must be one of daemon, plugin, cli, workflow, got %q`, *w.Source)
	}
	e := Entry{ID: *w.ID, TS: *w.TS, Level: *w.Level, Source: *w.Source, SourceName: w.SourceName, Target: *w.Target, Message: *w.Message}
	if len(w.Fields) > 0 && string(w.Fields) != "null" {
		var buf bytes.Buffer
		if err := json.Compact(&buf, w.Fields); err != nil {
			return record{}, fmt.Errorf(`field "fields": %v`, err)
		}
		e.Fields = buf.Bytes()
	}
	return record{NS: ts.UnixNano(), Entry: e}, nil
}

// marshalLine renders the entry as the compact JSON line stored in Loki
// (no HTML escaping: the line is data, not markup).
func marshalLine(e Entry) []byte { return appendLine(nil, e) }

// truncatedKey marks an entry whose message (or fields) was cut to fit
// Loki's line size limit.
const truncatedKey = "_animus_truncated"

// encodeLine renders the line, cutting the message (and, if that is not
// enough, replacing the fields) so the line fits in max bytes. A cut entry
// carries fields._animus_truncated = true; non-object fields are kept
// under "value". It fails only when even an empty message does not fit.
func encodeLine(e Entry, max int) (string, bool, error) {
	line := marshalLine(e)
	if len(line) <= max {
		return string(line), false, nil
	}
	e.Fields = markTruncated(e.Fields, max/4)
	msg := e.Message
	e.Message = ""
	base := len(marshalLine(e))
	if base > max {
		return "", false, fmt.Errorf("entry %q does not fit in Loki's %d-byte line limit even without its message", e.ID, max)
	}
	cut := max - base
	if cut > len(msg) {
		cut = len(msg)
	}
	for {
		for cut > 0 && cut < len(msg) && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		e.Message = msg[:cut]
		line = marshalLine(e)
		if len(line) <= max {
			return string(line), true, nil
		}
		cut -= len(line) - max // escapes made it longer: shrink by the excess
		if cut < 0 {
			cut = 0
		}
	}
}

// markTruncated adds the truncation marker to fields. Fields larger than
// budget are replaced by the marker and their original size.
func markTruncated(fields json.RawMessage, budget int) json.RawMessage {
	if len(fields) > budget {
		return json.RawMessage(`{"` + truncatedKey + `":true,"_animus_fields_bytes":` + strconv.Itoa(len(fields)) + `}`)
	}
	var obj map[string]json.RawMessage
	if len(fields) == 0 || json.Unmarshal(fields, &obj) != nil || obj == nil {
		obj = map[string]json.RawMessage{}
		if len(fields) > 0 {
			obj["value"] = fields
		}
	}
	obj[truncatedKey] = json.RawMessage("true")
	b, _ := json.Marshal(obj)
	return b
}

// fromResult decodes an entry read from Loki. A line that is not a valid
// LogEntry (written by something else into the same streams) is rebuilt
// from its labels and structured metadata, so every returned entry is a
// valid LogEntry.
func fromResult(r loki.Result) record {
	if rec, err := parseEntry(json.RawMessage(r.Line)); err == nil {
		rec.NS = r.TS // Loki's timestamp is the entry's own, to the ns
		return rec
	}
	meta := func(k string) string {
		if v, ok := r.SM[k]; ok {
			return v
		}
		return r.Stream[k]
	}
	id := meta("animus_id")
	if id == "" {
		h := fnv.New64a()
		_, _ = fmt.Fprintf(h, "%d\x00%s", r.TS, r.Line)
		id = fmt.Sprintf("loki-%d-%x", r.TS, h.Sum64())
	}
	level := meta("level")
	if logql.LevelRank(level) < 0 {
		level = "info"
	}
	source := meta("source")
	if !logql.ValidSource(source) {
		source = "plugin"
	}
	target := meta("target")
	if target == "" {
		target = "loki"
	}
	e := Entry{ID: id, TS: time.Unix(0, r.TS).UTC().Format(time.RFC3339Nano), Level: level, Source: source, Target: target, Message: r.Line}
	if sn := meta("source_name"); sn != "" {
		e.SourceName = &sn
	}
	return record{NS: r.TS, Entry: e}
}
