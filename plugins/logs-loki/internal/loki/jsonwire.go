package loki

import (
	"bytes"
	"compress/gzip"
	"sort"
	"strconv"
	"unicode/utf8"
)

// The JSON push body used to be built from maps and []any and handed to
// encoding/json: a profile of 500-entry stores put that reflection (and
// the map sorting) near a fifth of the plugin's CPU. The body is rendered
// here by hand instead, byte for byte what json.Encoder wrote (HTML-safe
// escaping, map keys sorted, the last of duplicate names winning, a
// trailing newline); jsonwire_test.go checks it against encoding/json.

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string exactly as encoding/json
// renders it: escapeHTML selects json.Marshal's \u003c escaping of <, >
// and & (json.Encoder with SetEscapeHTML(false) leaves them).
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!escapeHTML || (b != '<' && b != '>' && b != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendObject renders labels as the JSON object encoding/json makes of
// a map[string]string built from them: sorted by name, a repeated name
// keeping its last value.
func appendObject(dst []byte, ls []Label) []byte {
	sorted := ls
	if !sort.SliceIsSorted(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name }) {
		sorted = append([]Label(nil), ls...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	}
	dst = append(dst, '{')
	first := true
	for i, l := range sorted {
		if i+1 < len(sorted) && sorted[i+1].Name == l.Name {
			continue // a map keeps the last value of a repeated name
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = AppendString(dst, l.Name, true)
		dst = append(dst, ':')
		dst = AppendString(dst, l.Value, true)
	}
	return append(dst, '}')
}

// appendJSONPush renders Loki's JSON push body (uncompressed):
// {"streams":[{"stream":{…},"values":[["<ns>","<line>",{sm}]]}]}\n.
func appendJSONPush(dst []byte, streams []Stream) []byte {
	dst = append(dst, `{"streams":[`...)
	for i, s := range streams {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"stream":`...)
		dst = appendObject(dst, s.Labels)
		dst = append(dst, `,"values":[`...)
		for j, e := range s.Entries {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `["`...)
			dst = strconv.AppendInt(dst, e.TS, 10)
			dst = append(dst, `",`...)
			dst = AppendString(dst, e.Line, true)
			if len(e.SM) > 0 {
				dst = append(dst, ',')
				dst = appendObject(dst, e.SM)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, "]}"...)
	}
	return append(dst, "]}\n"...)
}

// jsonSize estimates the rendered body, to allocate it once.
func jsonSize(streams []Stream) int {
	n := 16
	for _, s := range streams {
		n += 32
		for _, l := range s.Labels {
			n += len(l.Name) + len(l.Value) + 8
		}
		for _, e := range s.Entries {
			n += len(e.Line) + len(e.Line)/8 + 32
			for _, l := range e.SM {
				n += len(l.Name) + len(l.Value) + 8
			}
		}
	}
	return n
}

// gzipBytes compresses raw with zw (which the caller owns) into a new
// buffer, in one Write as json.Encoder did.
func gzipBytes(zw *gzip.Writer, raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(raw)/4 + 64)
	zw.Reset(&buf)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
