package pluginkit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// MaxFrameBytes is the largest inbound frame accepted (spec §1.3 allows
// rejecting frames over 16 MiB). Host frames such as queue dispatches and
// subject patches can be several MiB, so the limit is explicit, not bufio's.
const MaxFrameBytes = 16 << 20

// frameError is an inbound frame that could not be used. It becomes a
// -32700 response; reading goes on at the next line.
type frameError struct{ reason string }

func (e *frameError) Error() string { return "parse error: " + e.reason }

var (
	errTooLarge    = &frameError{"frame exceeds 16 MiB"}
	errBadUTF8     = &frameError{"frame is not valid UTF-8"}
	errBOM         = &frameError{"frame starts with a byte order mark"}
	errInvalidJSON = &frameError{"invalid JSON"}
	errTruncated   = &frameError{"input ended inside a frame"}
)

// frameReader takes frames off the host's byte stream. A frame is normally
// one line. A line that opens a JSON object or array without closing it
// starts a pretty-printed frame (spec §1.1), which continues until its
// brackets balance. A line that starts with '{' in column 0 while such a
// frame is open is taken as a new frame and the open fragment is reported
// as a parse error: pretty-printers indent nested values, so this keeps one
// bad line from swallowing the frames after it.
//
// Lines longer than max are skipped to the next newline without being
// buffered, so a 100 MiB line costs no more memory than a 16 MiB one.
type frameReader struct {
	r   *bufio.Reader
	max int

	pending []byte // an open pretty-printed frame
	depth   depthScanner
	carry   []byte // a line that ended the previous open frame and starts the next
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next frame, a *frameError for input that cannot be a
// frame, or io.EOF. The returned slice is owned by the caller.
func (fr *frameReader) Next() ([]byte, error) {
	for {
		var line []byte
		var err error
		if fr.carry != nil {
			line, fr.carry = fr.carry, nil
		} else {
			line, err = fr.readLine()
		}
		if errors.Is(err, errTooLarge) {
			fr.reset()
			return nil, err
		}
		if err != nil && len(line) == 0 {
			if err == io.EOF && len(fr.pending) > 0 {
				fr.reset()
				return nil, errTruncated
			}
			return nil, err
		}
		frame, ferr := fr.feed(line)
		if frame != nil || ferr != nil {
			return frame, ferr
		}
		if err == io.EOF {
			if len(fr.pending) > 0 {
				fr.reset()
				return nil, errTruncated
			}
			return nil, io.EOF
		}
	}
}

// feed consumes one line. It returns a complete frame, a frame error, or
// neither when more lines are needed (or the line was blank).
func (fr *frameReader) feed(line []byte) ([]byte, error) {
	trimmed := bytes.TrimSpace(line)
	if len(fr.pending) == 0 {
		if len(trimmed) == 0 {
			return nil, nil
		}
		if bytes.HasPrefix(trimmed, []byte("\xef\xbb\xbf")) {
			return nil, errBOM
		}
		if !utf8.Valid(trimmed) {
			return nil, errBadUTF8
		}
		if json.Valid(trimmed) {
			return trimmed, nil
		}
		if (trimmed[0] != '{' && trimmed[0] != '[') || !jsonPrefix(trimmed) {
			return nil, errInvalidJSON
		}
		fr.depth = depthScanner{}
		if fr.depth.scan(trimmed) != depthOpen {
			return nil, errInvalidJSON
		}
		fr.pending = append(fr.pending[:0], trimmed...)
		return nil, nil
	}

	if len(line) > 0 && line[0] == '{' {
		// A new frame in column 0: the open fragment was garbage.
		fr.reset()
		fr.carry = line
		return nil, errInvalidJSON
	}
	if len(fr.pending)+1+len(trimmed) > fr.max {
		fr.reset()
		return nil, errTooLarge
	}
	if !utf8.Valid(trimmed) {
		fr.reset()
		return nil, errBadUTF8
	}
	fr.pending = append(fr.pending, '\n')
	fr.pending = append(fr.pending, trimmed...)
	switch fr.depth.scan(append([]byte{'\n'}, trimmed...)) {
	case depthOpen:
		return nil, nil
	case depthClosed:
		frame := fr.pending
		fr.pending = nil
		if !json.Valid(frame) {
			return nil, errInvalidJSON
		}
		return frame, nil
	default:
		fr.reset()
		return nil, errInvalidJSON
	}
}

func (fr *frameReader) reset() {
	fr.pending = nil
	fr.depth = depthScanner{}
}

// readLine returns one line without its newline. A line longer than max is
// discarded up to its newline and reported as errTooLarge. Short lines are
// copied out of bufio's buffer. A long line goes into a buffer that starts
// at 256 KiB and grows fourfold up to 4 MiB, then is reserved at the limit:
// a reservation at the limit costs only the pages written when the memory
// is fresh from the kernel, but Go zeroes all of it (16 MiB, ~3.5 ms, and
// a collection) whenever it reuses heap memory, which a plugin receiving
// many mid-sized frames (a 500-entry log batch) does on every call. Frames
// past 4 MiB still cost about their size once, not a growing slice's sum.
func (fr *frameReader) readLine() ([]byte, error) {
	chunk, err := fr.r.ReadSlice('\n')
	if err == nil {
		if len(chunk)-1 > fr.max {
			return nil, errTooLarge
		}
		return bytes.Clone(chunk[:len(chunk)-1]), nil
	}
	if err != bufio.ErrBufferFull {
		if len(chunk) > fr.max {
			return nil, errTooLarge
		}
		return bytes.Clone(chunk), err
	}
	if len(chunk) > fr.max {
		return nil, fr.discard(err)
	}
	line := make([]byte, 0, min(fr.max+1, firstLongLine))
	line = append(line, chunk...)
	for {
		chunk, err = fr.r.ReadSlice('\n')
		if len(line)+len(chunk) > fr.max+1 {
			return nil, fr.discard(err)
		}
		if len(line)+len(chunk) > cap(line) {
			line = fr.grow(line, len(line)+len(chunk))
		}
		line = append(line, chunk...)
		switch err {
		case nil:
			return line[:len(line)-1], nil
		case bufio.ErrBufferFull:
			continue
		default:
			return line, err
		}
	}
}

// Long-line buffer sizes (see readLine).
const (
	firstLongLine = 256 << 10
	lastGrownLine = 4 << 20
)

// grow returns line in a buffer of at least need bytes: four times larger
// while that stays under lastGrownLine, else reserved at the limit.
func (fr *frameReader) grow(line []byte, need int) []byte {
	size := cap(line) * 4
	for size < need {
		size *= 4
	}
	if size > lastGrownLine || size > fr.max+1 {
		size = fr.max + 1
	}
	out := make([]byte, len(line), size)
	copy(out, line)
	return out
}

// discard skips the rest of an oversized line.
func (fr *frameReader) discard(err error) error {
	for err == bufio.ErrBufferFull {
		_, err = fr.r.ReadSlice('\n')
	}
	if err != nil && err != io.EOF {
		return err
	}
	return errTooLarge
}

// jsonPrefix reports whether b is the start of a JSON value that more input
// could complete, as opposed to input that is already wrong ("{not json").
// Only the first line of a frame is checked this way; later lines are
// tracked by depth and the whole frame is validated when it closes.
func jsonPrefix(b []byte) bool {
	var v json.RawMessage
	err := json.NewDecoder(bytes.NewReader(b)).Decode(&v)
	return errors.Is(err, io.ErrUnexpectedEOF)
}

// depthScanner tracks bracket depth outside JSON strings across lines, so
// that a pretty-printed frame is recognised as complete in linear time.
type depthScanner struct {
	depth    int
	inString bool
	escaped  bool
}

type depthState int

const (
	depthOpen depthState = iota
	depthClosed
	depthBroken
)

func (d *depthScanner) scan(b []byte) depthState {
	for i, c := range b {
		switch {
		case d.escaped:
			d.escaped = false
		case d.inString:
			switch c {
			case '\\':
				d.escaped = true
			case '"':
				d.inString = false
			case '\n':
				return depthBroken
			}
		case c == '"':
			d.inString = true
		case c == '{' || c == '[':
			d.depth++
		case c == '}' || c == ']':
			d.depth--
			if d.depth < 0 {
				return depthBroken
			}
			if d.depth == 0 {
				if len(bytes.TrimSpace(b[i+1:])) != 0 {
					return depthBroken
				}
				return depthClosed
			}
		}
	}
	return depthOpen
}
