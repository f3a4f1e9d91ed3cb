package durable

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// compactJSON returns v compacted for storage, or nil when v is absent or
// JSON null (the kind treats the two alike). Keys keep the caller's order:
// the store returns values as they were sent. v has already been decoded
// once by encoding/json, so it is valid JSON; were it not, it is kept as is
// rather than lost.
func compactJSON(v json.RawMessage) []byte {
	if rustjson.IsNull(v) {
		return nil
	}
	b, err := rustjson.Marshal(v)
	if err != nil {
		return append([]byte(nil), v...)
	}
	return b
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
	if rustjson.IsNull(v) {
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
	// rustjson stores the text as sent ("<" stays "<"), as serde_json does.
	b, err := rustjson.Marshal(StepError{Code: *in.Code, Message: *in.Message, Details: compactJSON(in.Details)})
	if err != nil {
		return nil, pluginkit.Internal(err)
	}
	return b, nil
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
