package logstore

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/logql"
	"github.com/animus-plugins/animus-plugins/plugins/logs-loki/internal/loki"
)

// DecodeParams splits log_storage/store's params into its entries in one
// pass (see scanner). raw comes from a frame pluginkit has checked is
// JSON. Params it is unsure of go through encoding/json with the errors
// pluginkit's own decoding gives.
func (p *StoreParams) DecodeParams(raw []byte) error {
	if raw == nil {
		return nil // Validate names the missing field
	}
	if es, ok := splitEntries(raw); ok {
		p.Entries = &es
		return nil
	}
	type plain StoreParams // the same fields without this method
	var q plain
	if err := json.Unmarshal(raw, &q); err != nil {
		return pluginkit.ParamsError(err)
	}
	p.Entries = q.Entries
	return nil
}

// splitEntries returns the elements of params.entries as slices of raw
// (valid for the call only), when raw is an object whose one "entries"
// member is an array.
func splitEntries(raw []byte) ([]json.RawMessage, bool) {
	s := scanner{b: raw}
	if !s.consume('{') || s.consume('}') {
		return nil, false
	}
	var out []json.RawMessage
	found := false
	for {
		key, ok := s.str()
		if !ok || !s.consume(':') {
			return nil, false
		}
		switch {
		case string(key) == "entries":
			if found || !s.consume('[') {
				return nil, false
			}
			found = true
			out = make([]json.RawMessage, 0, len(raw)/256+1)
			if !s.consume(']') {
				for {
					v, ok := s.skip(1)
					if !ok {
						return nil, false
					}
					out = append(out, v)
					if s.consume(']') {
						break
					}
					if !s.consume(',') {
						return nil, false
					}
				}
			}
		case bytes.EqualFold(key, []byte("entries")):
			return nil, false // encoding/json would take it: its rules apply
		default:
			if _, ok := s.skip(0); !ok {
				return nil, false
			}
		}
		if s.consume('}') {
			break
		}
		if !s.consume(',') {
			return nil, false
		}
	}
	s.ws()
	return out, found && s.i == len(raw)
}

// isEntryKey reports whether key names a LogEntry member in any case:
// encoding/json matches those case-insensitively, so the fast path must not.
func isEntryKey(key []byte) bool {
	for _, k := range [...]string{"id", "ts", "level", "source", "source_name", "target", "message", "fields"} {
		if bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

// fastEntry is parseEntry for a valid entry in the usual shape; false
// sends the entry to parseEntry, which also words every error.
func fastEntry(raw []byte) (record, bool) {
	s := scanner{b: raw}
	if !s.consume('{') || s.consume('}') {
		return record{}, false
	}
	var e Entry
	var fields []byte
	var spaced bool
	var have uint8
	for {
		key, ok := s.str()
		if !ok || !s.consume(':') {
			return record{}, false
		}
		var v []byte
		switch string(key) {
		case "id", "ts", "level", "source", "target", "message":
			if v, ok = s.str(); !ok {
				return record{}, false
			}
		}
		switch string(key) {
		case "id":
			e.ID, have = string(v), have|1
		case "ts":
			e.TS, have = string(v), have|2
		case "level":
			e.Level, have = internLevel(v), have|4
		case "source":
			e.Source, have = internSource(v), have|8
		case "target":
			e.Target, have = string(v), have|16
		case "message":
			e.Message, have = string(v), have|32
		case "source_name":
			if s.peek() == 'n' {
				if !s.literal("null") {
					return record{}, false
				}
				e.SourceName = nil
				break
			}
			if v, ok = s.str(); !ok {
				return record{}, false
			}
			sn := string(v)
			e.SourceName = &sn
		case "fields":
			s.ws()
			s.spaced = false
			if fields, ok = s.skip(1); !ok {
				return record{}, false
			}
			spaced = s.spaced
		default:
			if isEntryKey(key) {
				return record{}, false
			}
			if _, ok := s.skip(1); !ok {
				return record{}, false
			}
		}
		if s.consume('}') {
			break
		}
		if !s.consume(',') {
			return record{}, false
		}
	}
	if s.ws(); s.i != len(raw) || have != 63 || e.ID == "" || logql.LevelRank(e.Level) < 0 || !logql.ValidSource(e.Source) {
		return record{}, false
	}
	ts, err := time.Parse(time.RFC3339Nano, e.TS)
	if err != nil {
		return record{}, false
	}
	if len(fields) > 0 && string(fields) != "null" {
		if !spaced {
			e.Fields = append(json.RawMessage(nil), fields...)
		} else {
			var buf bytes.Buffer
			if json.Compact(&buf, fields) != nil {
				return record{}, false
			}
			e.Fields = buf.Bytes()
		}
	}
	return record{NS: ts.UnixNano(), Entry: e}, true
}

// internLevel and internSource return the constant for a known value,
// saving two allocations per entry; others are copied.
func internLevel(v []byte) string {
	for _, l := range [...]string{"trace", "debug", "info", "warn", "error"} {
		if string(v) == l {
			return l
		}
	}
	return string(v)
}

func internSource(v []byte) string {
	for _, l := range [...]string{"daemon", "plugin", "cli", "workflow"} {
		if string(v) == l {
			return l
		}
	}
	return string(v)
}

// appendLine renders the entry as the compact JSON line stored in Loki,
// byte for byte what rustjson.Marshal (encoding/json without HTML
// escaping) makes of Entry, without its reflection.
func appendLine(dst []byte, e Entry) []byte {
	dst = append(dst, `{"id":`...)
	dst = loki.AppendString(dst, e.ID, false)
	dst = append(dst, `,"ts":`...)
	dst = loki.AppendString(dst, e.TS, false)
	dst = append(dst, `,"level":`...)
	dst = loki.AppendString(dst, e.Level, false)
	dst = append(dst, `,"source":`...)
	dst = loki.AppendString(dst, e.Source, false)
	if e.SourceName != nil {
		dst = append(dst, `,"source_name":`...)
		dst = loki.AppendString(dst, *e.SourceName, false)
	}
	dst = append(dst, `,"target":`...)
	dst = loki.AppendString(dst, e.Target, false)
	dst = append(dst, `,"message":`...)
	dst = loki.AppendString(dst, e.Message, false)
	if len(e.Fields) > 0 {
		dst = append(dst, `,"fields":`...)
		if bytes.ContainsAny(e.Fields, " \t\r\n") {
			buf := bytes.NewBuffer(dst)
			_ = json.Compact(buf, e.Fields) // every part is valid JSON already
			dst = buf.Bytes()
		} else {
			dst = append(dst, e.Fields...)
		}
	}
	return append(dst, '}')
}
