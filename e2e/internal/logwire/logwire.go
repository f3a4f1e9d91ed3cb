// Package logwire holds the log-storage protocol's LogEntry (also the
// daemon's DaemonLogEntry) as the e2e packages write and read it, declared
// here once so the tests share no code with the plugins.
package logwire

import "encoding/json"

// Entry is the wire LogEntry, in the upstream struct's field order.
type Entry struct {
	ID         string          `json:"id"`
	TS         string          `json:"ts"`
	Level      string          `json:"level"`
	Source     string          `json:"source"`
	SourceName string          `json:"source_name,omitempty"`
	Target     string          `json:"target"`
	Message    string          `json:"message"`
	Fields     json.RawMessage `json:"fields,omitempty"`
}
