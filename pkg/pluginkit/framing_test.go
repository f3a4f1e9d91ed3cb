package pluginkit

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFraming sends each input after initialize and checks the single
// response (or silence) it produces, then that the plugin still serves.
func TestFraming(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		code     int    // 0: a result is expected; -1: no frame at all
		id       string // the raw id the response must carry
		category string
	}{
		{"blank lines", "\n\n   \n\t\n", -1, "", ""},
		{"CRLF line", `{"jsonrpc":"2.0","id":5,"method":"$/ping"}` + "\r\n", 0, "5", ""},
		{"pretty-printed frame", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 6,\n  \"method\": \"test/echo\",\n  \"params\": {\n    \"message\": \"a {brace} and \\\" quote\"\n  }\n}\n", 0, "6", ""},
		{"invalid JSON", "{not json}\n", CodeParseError, "null", "parse_error"},
		{"truncated object on one line", `{"jsonrpc":"2.0","id":1` + "\n" + `{"jsonrpc":"2.0","id":7,"method":"$/ping"}` + "\n", CodeParseError, "null", "parse_error"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"test/echo\",\"params\":{\"message\":\"\xff\xfe\"}}\n", CodeParseError, "null", "parse_error"},
		{"byte order mark", "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"$/ping\"}\n", CodeParseError, "null", "parse_error"},
		{"two values on one line", `{"jsonrpc":"2.0","id":10,"method":"$/ping"} {"x":1}` + "\n", CodeParseError, "null", "parse_error"},
		{"a number", "42\n", CodeInvalidRequest, "null", "protocol"},
		{"a batch array", `[{"jsonrpc":"2.0","id":11,"method":"$/ping"}]` + "\n", CodeInvalidRequest, "null", "protocol"},
		{"missing jsonrpc", `{"id":12,"method":"$/ping"}` + "\n", CodeInvalidRequest, "12", "protocol"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":13,"method":"$/ping"}` + "\n", CodeInvalidRequest, "13", "protocol"},
		{"method not a string", `{"jsonrpc":"2.0","id":14,"method":7}` + "\n", CodeInvalidRequest, "14", "protocol"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"$/ping"}` + "\n", CodeInvalidRequest, "null", "protocol"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"$/ping"}` + "\n", CodeInvalidRequest, "null", "protocol"},
		{"scalar params", `{"jsonrpc":"2.0","id":15,"method":"test/echo","params":"x"}` + "\n", CodeInvalidRequest, "15", "protocol"},
		{"null params", `{"jsonrpc":"2.0","id":16,"method":"test/echo","params":null}` + "\n", 0, "16", ""},
		{"a response from the host", `{"jsonrpc":"2.0","id":99,"result":{}}` + "\n", -1, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := startHost(t, testPlugin())
			h.initialize()
			h.send(tc.input)
			switch tc.code {
			case -1:
				h.expectSilence(100 * time.Millisecond)
			default:
				f := h.next(time.Second)
				raw := f["__raw"].(string)
				if !strings.Contains(raw, `"id":`+tc.id+`,`) {
					t.Errorf("response %s does not carry id %s", raw, tc.id)
				}
				if tc.code == 0 {
					result(t, f)
				} else if code, _, cat := errCode(t, f); code != tc.code || cat != tc.category {
					t.Errorf("got %d/%s, want %d/%s", code, cat, tc.code, tc.category)
				}
			}
			if tc.name == "truncated object on one line" { // the next frame still got through
				if f := h.next(time.Second); f["id"] != float64(7) {
					t.Errorf("the frame after the fragment was lost: %v", f)
				}
			}
			if r := result(t, h.call("test/echo", map[string]any{"message": "alive"})); r["message"] != "alive" {
				t.Errorf("plugin stopped serving: %v", r)
			}
		})
	}
}

func TestParseErrorBeforeInitializeIsNotSent(t *testing.T) {
	h := startHost(t, testPlugin())
	h.send("garbage\n")
	h.expectSilence(100 * time.Millisecond)
	h.initialize() // the first frame with an id is the initialize reply
}

func TestOversizedFrameIsSkipped(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	big := `{"jsonrpc":"2.0","id":1,"method":"test/echo","params":{"message":"` + strings.Repeat("x", MaxFrameBytes) + `"}}` + "\n"
	h.send(big + `{"jsonrpc":"2.0","id":"after","method":"$/ping"}` + "\n")
	if code, msg, _ := errCode(t, h.next(5*time.Second)); code != CodeParseError || !strings.Contains(msg, "16 MiB") {
		t.Fatalf("oversized frame: %d %q", code, msg)
	}
	if f := h.next(time.Second); f["id"] != "after" {
		t.Fatalf("frame after the oversized one: %v", f)
	}
}

func TestLargeFrameAccepted(t *testing.T) {
	h := startHost(t, testPlugin())
	h.initialize()
	msg := strings.Repeat("y", MaxFrameBytes-200)
	id := h.sendRequest("test/echo", map[string]any{"message": msg})
	var resp map[string]any
	for resp == nil { // the race detector makes a 16 MiB decode slow: allow for it
		if f := h.next(60 * time.Second); f["id"] == float64(id) {
			resp = f
		}
	}
	r := result(t, resp)
	if r["message"] != msg {
		t.Fatalf("large frame echo lost data (%d bytes back)", len(r["message"].(string)))
	}
}

func TestFrameReader(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		input  string
		frames []string // "ERR" for a frame error
	}{
		{"lines", 100, "{\"a\":1}\n[1]\n", []string{`{"a":1}`, `[1]`}},
		{"no final newline", 100, `{"a":1}`, []string{`{"a":1}`}},
		{"pretty", 100, "{\n \"a\": [\n  1\n ]\n}\n{\"b\":2}\n", []string{"{\n\"a\": [\n1\n]\n}", `{"b":2}`}},
		{"brackets in strings", 100, "{\n\"a\": \"}]{[\"\n}\n", []string{"{\n\"a\": \"}]{[\"\n}"}},
		{"escaped quote", 100, "{\n\"a\": \"\\\"}\"\n}\n", []string{"{\n\"a\": \"\\\"}\"\n}"}},
		{"syntax error on an open line", 100, "{not json\n{\"b\":1}\n", []string{"ERR", `{"b":1}`}},
		{"garbage then frame in column 0", 100, "{\"a\":\n{\"b\":1}\n", []string{"ERR", `{"b":1}`}},
		{"too long", 10, "{\"a\":\"0123456789\"}\n{}\n", []string{"ERR", `{}`}},
		{"pretty too long", 12, "{\n\"a\": \"0123456789\"\n}\n{}\n", []string{"ERR", "ERR", `{}`}},
		{"eof inside a frame", 100, "{\n\"a\": 1", []string{"ERR"}},
		{"string across lines", 100, "{\"a\": \"x\n\"}\n{}\n", []string{"ERR", `{}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fr := newFrameReader(strings.NewReader(tc.input), tc.max)
			var got []string
			for {
				f, err := fr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				var ferr *frameError
				if errors.As(err, &ferr) {
					got = append(got, "ERR")
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(f))
			}
			if strings.Join(got, "|") != strings.Join(tc.frames, "|") {
				t.Errorf("got %q, want %q", got, tc.frames)
			}
		})
	}
}

// FuzzFrameReader checks that no input makes the reader panic, loop, or
// return a frame that is not valid JSON or is over the limit.
func FuzzFrameReader(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n",
		"{\n  \"a\": [1, 2,\n {\"b\": \"}\"}]\n}\n",
		"\xef\xbb\xbf{}\n",
		"{\"a\":\n{\"b\":1}\n",
		"\n\n\r\n",
		"[[[[[[\n]]]]]]\n",
		"\"str\"\n42\nnull\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := newFrameReader(bytes.NewReader(data), 256)
		for i := 0; i <= len(data)+1; i++ {
			frame, err := fr.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			var ferr *frameError
			if errors.As(err, &ferr) {
				continue
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if len(frame) > 256 {
				t.Fatalf("frame of %d bytes over the limit", len(frame))
			}
			if _, envErr := decodeInbound(frame); envErr == nil && len(frame) == 0 {
				t.Fatalf("empty frame decoded")
			}
		}
		t.Fatalf("reader did not reach EOF after %d calls", len(data)+2)
	})
}

// Long frames cross the long-line buffer's growth steps (256 KiB, ×4 up to
// 4 MiB, then the limit) intact, and one past the limit is still refused.
func TestFrameReaderLongLines(t *testing.T) {
	const limit = 6 << 20
	for _, size := range []int{70 << 10, 256 << 10, 300 << 10, 1<<20 + 7, 4<<20 + 1, limit} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			frame := `"` + strings.Repeat("x", size-2) + `"`
			fr := newFrameReader(strings.NewReader(frame+"\n[1]\n"), limit)
			got, err := fr.Next()
			if err != nil || string(got) != frame {
				t.Fatalf("frame of %d bytes: %d bytes back, %v", size, len(got), err)
			}
			if got, err := fr.Next(); err != nil || string(got) != "[1]" {
				t.Fatalf("next frame: %q %v", got, err)
			}
		})
	}
	fr := newFrameReader(strings.NewReader(`"`+strings.Repeat("x", limit)+"\"\n[2]\n"), limit)
	var ferr *frameError
	if _, err := fr.Next(); !errors.As(err, &ferr) {
		t.Fatalf("a frame past the limit: %v", err)
	}
	if got, err := fr.Next(); err != nil || string(got) != "[2]" {
		t.Fatalf("after the refused frame: %q %v", got, err)
	}
}
