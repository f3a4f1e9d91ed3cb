package golden

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"

	"golang.org/x/tools/txtar"
)

// Script is one golden conversation, read from a txtar file:
//
//	comment      what the conversation shows (kept on -update)
//	-- env --    optional KEY=VALUE lines: the daemon's environment overlay;
//	             ${NAME} variables (see Vars) are expanded
//	-- client -- the host's side, one step per line (see Step)
//	-- normalize -- optional "regexp => replacement" lines, applied to the
//	             plugin's frames after the standard rules (see normalize.go)
//	-- server -- the golden: what the plugin sent, normalised, then its exit
type Script struct {
	Path      string
	Comment   []byte
	Env       map[string]string
	Steps     []Step
	Normalize []Rule
	Server    []byte
}

// Step is one client line. A JSON object is sent as one frame: a request
// (it has an id) waits for its response, a notification waits Settle for
// whatever it causes. "${ID.path}" inside a frame is replaced by the JSON
// value at path in the result of the earlier response with that id (for
// ids the plugin generated), and ${NAME} by a variable (see Vars).
// Directives start with "!":
//
//	!wait METHOD   wait until one more METHOD notification than seen so far arrives
//	!sleep DUR     wait DUR (a time.Duration)
//	!exit          wait for the process to exit, at most 2 s
type Step struct {
	Line  int
	Frame []byte // a frame to send, or nil for a directive
	Op    string // "wait", "sleep", "exit"
	Arg   string
}

// Rule is one extra normalisation: every match of Re becomes Repl
// (regexp.ReplaceAll syntax).
type Rule struct {
	Re   *regexp.Regexp
	Repl []byte
}

// Parse parses a script; path is only for messages.
func Parse(path string, data []byte) (*Script, error) {
	ar := txtar.Parse(data)
	s := &Script{Path: path, Comment: ar.Comment, Env: map[string]string{}}
	seen := map[string]bool{}
	for _, f := range ar.Files {
		if seen[f.Name] {
			return nil, fmt.Errorf("%s: section %q twice", path, f.Name)
		}
		seen[f.Name] = true
		var err error
		switch f.Name {
		case "env":
			err = s.parseEnv(f.Data)
		case "client":
			err = s.parseClient(f.Data)
		case "normalize":
			err = s.parseNormalize(f.Data)
		case "server":
			s.Server = f.Data
		default:
			err = fmt.Errorf("unknown section %q (want env, client, normalize, server)", f.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if len(s.Steps) == 0 {
		return nil, fmt.Errorf("%s: no client steps", path)
	}
	return s, nil
}

func (s *Script) parseEnv(data []byte) error {
	for i, line := range lines(data) {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" {
			return fmt.Errorf("env line %d: want KEY=VALUE, got %q", i+1, line)
		}
		s.Env[k] = v
	}
	return nil
}

func (s *Script) parseClient(data []byte) error {
	for i, line := range lines(data) {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "!"):
			op, arg, _ := strings.Cut(line[1:], " ")
			st := Step{Line: i + 1, Op: op, Arg: strings.TrimSpace(arg)}
			switch op {
			case "wait":
				if st.Arg == "" {
					return fmt.Errorf("client line %d: !wait needs a notification method", i+1)
				}
			case "sleep":
				if _, err := time.ParseDuration(st.Arg); err != nil {
					return fmt.Errorf("client line %d: %v", i+1, err)
				}
			case "exit":
			default:
				return fmt.Errorf("client line %d: unknown directive !%s", i+1, op)
			}
			s.Steps = append(s.Steps, st)
		default:
			s.Steps = append(s.Steps, Step{Line: i + 1, Frame: []byte(line)})
		}
	}
	return nil
}

func (s *Script) parseNormalize(data []byte) error {
	for i, line := range lines(data) {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pat, repl, ok := strings.Cut(line, " => ")
		if !ok {
			return fmt.Errorf("normalize line %d: want `regexp => replacement`", i+1)
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return fmt.Errorf("normalize line %d: %v", i+1, err)
		}
		s.Normalize = append(s.Normalize, Rule{Re: re, Repl: []byte(repl)})
	}
	return nil
}

// Format renders the script with server as its golden section, keeping
// the other sections as they were written.
func (s *Script) Format(original []byte, server []byte) []byte {
	ar := txtar.Parse(original)
	found := false
	for i := range ar.Files {
		if ar.Files[i].Name == "server" {
			ar.Files[i].Data, found = server, true
		}
	}
	if !found {
		ar.Files = append(ar.Files, txtar.File{Name: "server", Data: server})
	}
	return txtar.Format(ar)
}

func lines(data []byte) []string {
	return strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
}
