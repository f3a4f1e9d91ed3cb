package logstore

import (
	"unicode/utf8"
)

// A profile of 500-entry stores put encoding/json at the top of the
// plugin's own CPU: the params were scanned twice to split them into
// entries, then each entry was scanned twice more and decoded by
// reflection, and its fields compacted in another pass. scanner walks a
// params value once instead. It accepts only what it is sure of; anything
// else (a \u escape, a value of an unexpected type, a case-folded key,
// deep nesting) makes the caller take the encoding/json path, so errors
// and edge cases behave exactly as before.
type scanner struct {
	b []byte
	i int
	// spaced is set whenever whitespace is passed: cleared before a
	// value, it tells whether the value needs compacting.
	spaced bool
}

// maxFastDepth bounds nesting on the fast path (encoding/json allows
// 10,000; deeper values take its path).
const maxFastDepth = 64

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
			s.spaced = true
		default:
			return
		}
	}
}

// peek is the next byte after whitespace, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// consume skips whitespace and then c, reporting whether c was there.
func (s *scanner) consume(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// str reads a string at s.i (after whitespace) and returns its decoded
// bytes: a slice of the input when it holds no escape, otherwise a copy
// with the short escapes undone. A \u escape, a control character or
// invalid UTF-8 (which encoding/json would replace) reports false.
func (s *scanner) str() ([]byte, bool) {
	if !s.consume('"') {
		return nil, false
	}
	start := s.i
	ascii := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			out := s.b[start:s.i]
			s.i++
			return out, ascii || utf8.Valid(out)
		case c == '\\':
			return s.escaped(start)
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		s.i++
	}
	return nil, false
}

// escaped finishes a string that has a backslash at s.i.
func (s *scanner) escaped(start int) ([]byte, bool) {
	out := append([]byte(nil), s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return out, utf8.Valid(out)
		case c < 0x20:
			return nil, false
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return nil, false
		}
		switch e := s.b[s.i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default: // \u (surrogates, U+FFFD rules) is left to encoding/json
			return nil, false
		}
		s.i += 2
	}
	return nil, false
}

// skip passes one value (after whitespace) and returns its span. It
// checks JSON's grammar for what it passes.
func (s *scanner) skip(depth int) ([]byte, bool) {
	c := s.peek()
	start := s.i
	ok := false
	switch {
	case c == '"':
		ok = s.skipString()
	case c == '{' || c == '[':
		ok = depth < maxFastDepth && s.skipComposite(c, depth)
	case c == 't':
		ok = s.literal("true")
	case c == 'f':
		ok = s.literal("false")
	case c == 'n':
		ok = s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		ok = s.number()
	}
	if !ok {
		return nil, false
	}
	return s.b[start:s.i], true
}

func (s *scanner) skipComposite(open byte, depth int) bool {
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	s.i++
	if s.consume(closer) {
		return true
	}
	for {
		if open == '{' && (!s.skipString() || !s.consume(':')) {
			return false
		}
		if _, ok := s.skip(depth + 1); !ok {
			return false
		}
		switch c := s.peek(); {
		case c == ',':
			s.i++
		case c == closer:
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *scanner) skipString() bool {
	if !s.consume('"') {
		return false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || !isHex4(s.b[s.i+2:s.i+6]) {
					return false
				}
				s.i += 6
			default:
				return false
			}
			continue
		}
		s.i++
	}
	return false
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// number passes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *scanner) number() bool {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}
