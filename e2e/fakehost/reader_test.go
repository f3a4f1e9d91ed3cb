package fakehost

import (
	"errors"
	"strings"
	"testing"
)

// These exercise the host's own stdout parsers in isolation (the plugin side
// is covered by the process tests); feeding odd chunk boundaries is much
// easier here than through a pipe.

type splitResult struct{ frames, garbage []string }

func runSplitter(sp splitter, chunks []string) (splitResult, error) {
	var r splitResult
	for _, c := range chunks {
		sp.feed([]byte(c))
		for {
			ch, ok, err := sp.next()
			if err != nil {
				return r, err
			}
			if !ok {
				break
			}
			if ch.frame != nil {
				r.frames = append(r.frames, string(ch.frame))
			} else {
				r.garbage = append(r.garbage, string(ch.garbage))
			}
		}
	}
	if rest := sp.flush(); len(rest) > 0 {
		r.garbage = append(r.garbage, "EOF:"+string(rest))
	}
	return r, nil
}

func TestSplitters(t *testing.T) {
	pretty := "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {}\n}\n"
	cases := []struct {
		name                   string
		chunks                 []string
		streamFrames, lineFrms int
		streamGarbage          []string
		lineGarbage            int
	}{
		{"compact", []string{`{"a":1}` + "\n" + `{"b":2}` + "\n"}, 2, 2, nil, 0},
		{"split across reads", []string{`{"a":"x`, `y}z"`, "}\n"}, 1, 1, nil, 0},
		{"no newline needed in stream", []string{`{"a":1}{"b":2}`, "\n"}, 2, 0, nil, 1},
		{"blank lines ignored", []string{"\n\n  \r\n" + `{"a":1}` + "\n\n"}, 1, 1, nil, 0},
		{"pretty-printed", []string{pretty}, 1, 0, nil, 5},
		{"garbage line then frame", []string{"hello world\n" + `{"a":1}` + "\n"}, 1, 1, []string{"hello world"}, 1},
		{"broken object dropped to newline", []string{"{oops\n" + `{"a":1}` + "\n"}, 1, 1, []string{"{oops"}, 1},
		{"brace inside string", []string{`{"a":"}{"}` + "\n"}, 1, 1, nil, 0},
		{"escaped quote", []string{`{"a":"\"}"}` + "\n"}, 1, 1, nil, 0},
		{"bare number is not a frame", []string{"42\n" + `{"a":1}` + "\n"}, 1, 1, []string{"42"}, 1},
		{"truncated at EOF", []string{`{"a":`}, 0, 0, []string{"EOF:{\"a\":"}, 1},
		{"trailing text after frame", []string{`{"a":1} tail` + "\n"}, 1, 0, []string{"tail"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := runSplitter(&streamSplitter{}, c.chunks)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.frames) != c.streamFrames || strings.Join(r.garbage, "|") != strings.Join(c.streamGarbage, "|") {
				t.Errorf("stream: frames %q garbage %q; want %d frames, garbage %q", r.frames, r.garbage, c.streamFrames, c.streamGarbage)
			}
			r, err = runSplitter(&lineSplitter{}, c.chunks)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.frames) != c.lineFrms || len(r.garbage) != c.lineGarbage {
				t.Errorf("line: frames %q garbage %q; want %d frames, %d garbage", r.frames, r.garbage, c.lineFrms, c.lineGarbage)
			}
		})
	}
}

func TestSplitterOverflow(t *testing.T) {
	big := `{"a":"` + strings.Repeat("x", MaxPendingFrame)
	for name, sp := range map[string]splitter{"stream": &streamSplitter{}, "line": &lineSplitter{}} {
		if _, err := runSplitter(sp, []string{big[:1<<20], big[1<<20:]}); !errors.Is(err, errOverflow) {
			t.Errorf("%s: err = %v, want overflow", name, err)
		}
	}
	// A large frame just under the limit, arriving in 64 KiB reads, is fine.
	frame := `{"a":"` + strings.Repeat("y", MaxPendingFrame-64) + `"}` + "\n"
	var chunks []string
	for i := 0; i < len(frame); i += 64 << 10 {
		chunks = append(chunks, frame[i:min(i+64<<10, len(frame))])
	}
	r, err := runSplitter(&streamSplitter{}, chunks)
	if err != nil || len(r.frames) != 1 {
		t.Fatalf("big frame: %d frames, err %v", len(r.frames), err)
	}
}
