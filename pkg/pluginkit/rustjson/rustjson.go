package rustjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Marshal encodes v compactly without HTML escaping and without a trailing
// newline, as serde_json::to_vec does. Compact output never holds a raw
// newline, even for json.RawMessage values, which encoding/json compacts.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := Encode(&buf, v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Encode writes v to w as Marshal renders it, followed by a newline (the
// framing of a JSON line). The value reaches w in a single Write.
func Encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %T: %w", v, err)
	}
	return nil
}

// Canonical re-encodes an arbitrary JSON value with object keys sorted at
// every level and number literals kept as written. It returns nil for an
// absent value or JSON null, so an optional field stays absent.
func Canonical(raw json.RawMessage) (json.RawMessage, error) {
	if IsNull(raw) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return Marshal(v)
}

// IsNull reports whether raw is absent or the JSON literal null.
func IsNull(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// Time renders t in UTC as chrono's DateTime::to_rfc3339 does: offset
// "+00:00" and a fraction of 0, 3, 6 or 9 digits that shows every non-zero
// sub-second digit. The reference plugins emit their own timestamps so.
func Time(t time.Time) string { return string(AppendTime(nil, t, "+00:00")) }

// TimeZ renders t in UTC as serde renders a chrono DateTime<Utc>: the same
// fraction rule as Time, with "Z".
func TimeZ(t time.Time) string { return string(AppendTime(nil, t, "Z")) }

// AppendTime appends t in UTC with chrono's fraction rule and the given
// offset text ("Z" or "+00:00").
func AppendTime(b []byte, t time.Time, offset string) []byte {
	t = t.UTC()
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	switch ns := t.Nanosecond(); {
	case ns == 0:
	case ns%1_000_000 == 0:
		b = appendFraction(b, ns/1_000_000, 3)
	case ns%1_000 == 0:
		b = appendFraction(b, ns/1_000, 6)
	default:
		b = appendFraction(b, ns, 9)
	}
	return append(b, offset...)
}

func appendFraction(b []byte, n, width int) []byte {
	b = append(b, '.')
	digits := strconv.Itoa(n)
	for i := len(digits); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, digits...)
}

// ErrTimestamp is what ParseTime reports for text that is not RFC 3339.
var ErrTimestamp = errors.New("not an RFC 3339 timestamp")

// ParseTime parses an RFC 3339 timestamp as chrono does for DateTime<Utc>:
// any offset (converted to UTC), "Z" or "z", and "T", "t" or a space
// between date and time.
func ParseTime(s string) (time.Time, error) {
	if len(s) < len("2006-01-02T15:04:05Z") {
		return time.Time{}, ErrTimestamp
	}
	b := []byte(s)
	switch b[10] {
	case 'T':
	case 't', ' ':
		b[10] = 'T'
	default:
		return time.Time{}, ErrTimestamp
	}
	if last := len(b) - 1; b[last] == 'z' {
		b[last] = 'Z'
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return time.Time{}, ErrTimestamp
	}
	return t.UTC(), nil
}
