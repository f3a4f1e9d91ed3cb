package durable

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
)

// compactJSON returns v compacted for storage, or nil when v is absent or
// JSON null (the kind treats the two alike). v has already been decoded once
// by encoding/json, so it is valid JSON.
func compactJSON(v json.RawMessage) []byte {
	if isAbsent(v) {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return append([]byte(nil), v...)
	}
	return b.Bytes()
}

func isAbsent(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) == 0 || string(t) == "null"
}

// stepErrorIn decodes a StepError with its required fields detectable.
type stepErrorIn struct {
	Code    *string         `json:"code"`
	Details json.RawMessage `json:"details"`
	Message *string         `json:"message"`
}

// normalizeStepError checks that v (when present) is a StepError and
// re-encodes it with sorted keys, dropping unknown fields and a null
// details, as the Rust types would. Absent or null gives nil.
func normalizeStepError(v json.RawMessage) ([]byte, error) {
	if isAbsent(v) {
		return nil, nil
	}
	var in stepErrorIn
	if err := json.Unmarshal(v, &in); err != nil {
		return nil, pluginkit.InvalidParams("invalid params: field %q must be a StepError object {code, message, details?}", "error").WithData("field", "error")
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"code", in.Code}, {"message", in.Message}} {
		if f.v == nil {
			return nil, pluginkit.InvalidParams("invalid params: field %q is required", "error."+f.name).WithData("field", "error."+f.name)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // store the text as sent, not \u003c-escaped
	if err := enc.Encode(StepError{Code: *in.Code, Message: *in.Message, Details: compactJSON(in.Details)}); err != nil {
		return nil, pluginkit.Internal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// checkSize refuses a value above the configured limit with -32602: the
// kind says larger values belong in the artifact store, passed by reference.
func checkSize(field string, v []byte, limit int) error {
	if len(v) > limit {
		return pluginkit.InvalidParams("invalid params: %s is %d bytes, max_payload_bytes is %d; store large values as artifacts and pass a reference",
			field, len(v), limit).WithData("field", field).WithData("max_payload_bytes", limit).WithData("size", len(v))
	}
	return nil
}

// formatTime renders t as chrono's to_rfc3339 does, which is what the Rust
// plugins emit: UTC, offset "+00:00", and a fraction of 0, 3, 6 or 9 digits
// showing every non-zero sub-second digit.
func formatTime(t time.Time) string {
	t = t.UTC()
	base := t.Format("2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
		return base + "+00:00"
	case ns%1_000_000 == 0:
		return base + "." + pad(ns/1_000_000, 3) + "+00:00"
	case ns%1_000 == 0:
		return base + "." + pad(ns/1_000, 6) + "+00:00"
	}
	return base + "." + pad(ns, 9) + "+00:00"
}

func pad(n, width int) string {
	s := strconv.Itoa(n)
	return strings.Repeat("0", width-len(s)) + s
}

// clipString shortens s for an error message, at a rune boundary.
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return truncateUTF8(s, n) + "…"
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
