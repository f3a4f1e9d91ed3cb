package fakehost

import (
	"bytes"
	"encoding/json"
	"errors"
)

// MaxPendingFrame is the daemon reader's limit: more than 8 MiB buffered
// without a complete frame tears the host down (host-and-lifecycle §2.3).
const MaxPendingFrame = 8 << 20

// errOverflow is returned by a splitter once MaxPendingFrame is exceeded.
var errOverflow = errors.New("more than 8 MiB buffered without a complete frame")

// chunk is one unit a splitter takes off the byte stream: either a complete
// JSON object (frame) or bytes that were discarded as not-a-frame (garbage).
type chunk struct {
	frame   []byte
	garbage []byte
}

// splitter turns stdout bytes into chunks. feed appends data; next returns the
// next chunk, or ok=false when more input is needed. At EOF, flush returns
// whatever incomplete input was left.
type splitter interface {
	feed(p []byte)
	next() (c chunk, ok bool, err error)
	flush() []byte
}

// streamSplitter is the current daemon reader: it does not need newlines and
// takes complete JSON values off the stream, so pretty-printed frames work.
// Malformed input is dropped up to the next newline.
//
// Finding the end of a value uses an incremental bracket scanner (string- and
// escape-aware), so a multi-MiB frame arriving in many reads is scanned once.
// The scanner alone cannot tell "incomplete" from "broken" ({oops\n never
// balances), so whenever new input holds a newline the buffer is also run
// through a real JSON decoder, which distinguishes a syntax error from an
// unexpected EOF. That check re-reads the buffer, so for big buffers it only
// runs after the buffer has doubled since the last check (amortised linear).
type streamSplitter struct {
	buf      []byte
	skipping bool   // discarding up to the next newline
	dropped  []byte // garbage collected while skipping (clipped for reports)

	scanPos int  // bytes of buf already seen by the bracket scanner
	depth   int  // bracket depth at scanPos
	inStr   bool // scanner is inside a string
	esc     bool // previous byte was a backslash inside a string

	checkedLen int  // buf length at the last decoder syntax check
	sawNewline bool // a newline arrived since that check
}

func (s *streamSplitter) feed(p []byte) {
	if bytes.IndexByte(p, '\n') >= 0 {
		s.sawNewline = true
	}
	s.buf = append(s.buf, p...)
}

func (s *streamSplitter) resetScan() {
	s.scanPos, s.depth, s.inStr, s.esc = 0, 0, false, false
	s.checkedLen, s.sawNewline = 0, bytes.IndexByte(s.buf, '\n') >= 0
}

func (s *streamSplitter) consume(n int) {
	s.buf = s.buf[n:]
	s.resetScan()
}

func (s *streamSplitter) next() (chunk, bool, error) {
	for {
		if s.skipping {
			i := bytes.IndexByte(s.buf, '\n')
			if i < 0 {
				s.dropped = appendClipped(s.dropped, s.buf)
				s.buf = s.buf[:0]
				s.resetScan()
				return chunk{}, false, nil
			}
			g := appendClipped(s.dropped, s.buf[:i])
			s.dropped, s.skipping = nil, false
			s.consume(i + 1)
			return chunk{garbage: g}, true, nil
		}
		// Leading JSON whitespace (including blank lines) is not garbage.
		trim := 0
		for trim < len(s.buf) && isJSONSpace(s.buf[trim]) {
			trim++
		}
		if trim > 0 {
			s.consume(trim)
		}
		if len(s.buf) == 0 {
			return chunk{}, false, nil
		}
		if s.buf[0] != '{' {
			// Frames are objects; anything else (log text, a bare number,
			// a batch array the daemon does not support) is garbage.
			s.skipping = true
			continue
		}
		if end := s.scan(); end >= 0 {
			cand := s.buf[:end+1]
			if json.Valid(cand) {
				f := append([]byte(nil), cand...)
				s.consume(end + 1)
				return chunk{frame: f}, true, nil
			}
			s.skipping = true
			continue
		}
		if s.sawNewline && (s.checkedLen < 64<<10 || len(s.buf) >= 2*s.checkedLen) {
			s.checkedLen, s.sawNewline = len(s.buf), false
			var v json.RawMessage
			err := json.NewDecoder(bytes.NewReader(s.buf)).Decode(&v)
			var se *json.SyntaxError
			if errors.As(err, &se) {
				s.skipping = true
				continue
			}
		}
		if len(s.buf) > MaxPendingFrame {
			return chunk{}, false, errOverflow
		}
		return chunk{}, false, nil
	}
}

// scan advances the bracket scanner over new bytes and returns the index of
// the byte that closes the top-level object, or -1.
func (s *streamSplitter) scan() int {
	for ; s.scanPos < len(s.buf); s.scanPos++ {
		b := s.buf[s.scanPos]
		switch {
		case s.inStr:
			switch {
			case s.esc:
				s.esc = false
			case b == '\\':
				s.esc = true
			case b == '"':
				s.inStr = false
			}
		case b == '"':
			s.inStr = true
		case b == '{' || b == '[':
			s.depth++
		case b == '}' || b == ']':
			s.depth--
			if s.depth == 0 {
				end := s.scanPos
				s.scanPos++
				return end
			}
		}
	}
	return -1
}

func (s *streamSplitter) flush() []byte {
	rest := appendClipped(s.dropped, bytes.Trim(s.buf, " \t\r\n"))
	s.buf, s.dropped = nil, nil
	return rest
}

// lineSplitter is the April 2026 host: every line must be one complete JSON
// frame. A pretty-printed frame therefore turns into a run of garbage lines.
type lineSplitter struct {
	buf []byte
}

func (l *lineSplitter) feed(p []byte) { l.buf = append(l.buf, p...) }

func (l *lineSplitter) next() (chunk, bool, error) {
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > MaxPendingFrame {
				return chunk{}, false, errOverflow
			}
			return chunk{}, false, nil
		}
		line := bytes.Trim(l.buf[:i], " \t\r")
		l.buf = l.buf[i+1:]
		if len(line) == 0 {
			continue
		}
		if line[0] == '{' && json.Valid(line) {
			return chunk{frame: append([]byte(nil), line...)}, true, nil
		}
		return chunk{garbage: appendClipped(nil, line)}, true, nil
	}
}

func (l *lineSplitter) flush() []byte {
	rest := appendClipped(nil, bytes.Trim(l.buf, " \t\r\n"))
	l.buf = nil
	return rest
}

func isJSONSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// garbageClip bounds how much discarded output a violation message quotes.
const garbageClip = 256

func appendClipped(dst, src []byte) []byte {
	if room := garbageClip - len(dst); room > 0 {
		if len(src) > room {
			src = src[:room]
		}
		dst = append(dst, src...)
	}
	return dst
}
