package pluginkit

import "bytes"

// scan fills in's raw fields from frame, a valid JSON text (frameReader
// lets nothing else through), without encoding/json. It reports false,
// having decided nothing, for whatever it leaves to json.Unmarshal: a
// frame that is not an object, a key written with escapes, and a key that
// only case-folds to a field name (encoding/json matches keys
// case-insensitively, Unicode folds included). What it accepts it decodes
// as json.Unmarshal would: each value as its raw bytes without the
// surrounding whitespace (a null included), the last of duplicate keys
// winning, other keys ignored.
//
// The first json.Unmarshal of a process builds the reflection cache of the
// type it decodes, ~70 µs that a per-call process spent on its first frame
// only; the steady state gains little.
func (in *inbound) scan(frame []byte) bool {
	i := skipSpace(frame, 0)
	if i >= len(frame) || frame[i] != '{' {
		return false
	}
	i = skipSpace(frame, i+1)
	if i < len(frame) && frame[i] == '}' {
		return skipSpace(frame, i+1) == len(frame)
	}
	for {
		if i >= len(frame) || frame[i] != '"' {
			return false
		}
		end, escaped := stringEnd(frame, i)
		if end < 0 || escaped {
			return false
		}
		key := frame[i+1 : end-1]
		i = skipSpace(frame, end)
		if i >= len(frame) || frame[i] != ':' {
			return false
		}
		i = skipSpace(frame, i+1)
		vend := valueEnd(frame, i)
		if vend < 0 || !in.set(key, frame[i:vend]) {
			return false
		}
		i = skipSpace(frame, vend)
		switch {
		case i >= len(frame):
			return false
		case frame[i] == '}':
			return skipSpace(frame, i+1) == len(frame)
		case frame[i] != ',':
			return false
		}
		i = skipSpace(frame, i+1)
	}
}

// set stores one member. It reports false for a key it cannot judge.
func (in *inbound) set(key, value []byte) bool {
	switch string(key) {
	case "jsonrpc":
		in.JSONRPC = value
	case "id":
		in.ID = value
	case "method":
		in.Method = value
	case "params":
		in.Params = value
	case "result":
		in.Result = value
	case "error":
		in.Error = value
	default:
		for _, c := range key {
			if c >= 0x80 { // may fold to ASCII (K, ſ): encoding/json decides
				return false
			}
		}
		for _, name := range [...]string{"jsonrpc", "id", "method", "params", "result", "error"} {
			if bytes.EqualFold(key, []byte(name)) {
				return false
			}
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that opens at b[i], and
// whether it holds an escape; -1 when it does not end.
func stringEnd(b []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return -1, escaped
}

// valueEnd returns the index after the value that starts at b[i], or -1.
// Containers are skipped by depth, strings by their quotes; the frame is
// valid JSON, so nothing else needs checking.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := stringEnd(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := stringEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte(" \t\n\r,}]"), b[j]) < 0 {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
