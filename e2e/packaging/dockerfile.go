package packaging

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Instruction is one Dockerfile instruction, continuation lines joined.
type Instruction struct {
	Line  int               // first line, 1-based
	Cmd   string            // keyword, upper case
	Flags map[string]string // leading --name=value flags (COPY --from, --chmod, ...)
	Args  []string          // words after the flags, quotes removed; the array for exec form
	Exec  bool              // JSON (exec) form
	Raw   string            // everything after the keyword
}

// Stage is one FROM and the instructions up to the next FROM.
type Stage struct {
	Index        int
	Name         string // the AS name, lower case; "" when unnamed
	Base         string // image or earlier stage, as written
	Line         int
	Instructions []Instruction
}

// Dockerfile is a parsed Dockerfile.
type Dockerfile struct {
	GlobalArgs []Instruction // ARGs before the first FROM
	Stages     []*Stage
}

// knownInstructions are the Dockerfile reference's instructions.
var knownInstructions = map[string]bool{
	"FROM": true, "RUN": true, "CMD": true, "LABEL": true, "MAINTAINER": true,
	"EXPOSE": true, "ENV": true, "ADD": true, "COPY": true, "ENTRYPOINT": true,
	"VOLUME": true, "USER": true, "WORKDIR": true, "ARG": true, "ONBUILD": true,
	"STOPSIGNAL": true, "HEALTHCHECK": true, "SHELL": true,
}

// execForm lists the instructions whose argument may be a JSON array.
var execForm = map[string]bool{"RUN": true, "CMD": true, "ENTRYPOINT": true, "SHELL": true, "COPY": true, "ADD": true, "VOLUME": true}

// ParseDockerfile parses the subset of Dockerfile syntax this project uses
// and rejects what it cannot check (heredocs) instead of guessing.
func ParseDockerfile(text string) (*Dockerfile, error) {
	df := &Dockerfile{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// Join continuation lines; comment and blank lines inside a
		// continuation are dropped, as Docker does.
		for strings.HasSuffix(line, "\\") {
			line = strings.TrimSuffix(line, "\\")
			i++
			for i < len(lines) && (strings.TrimSpace(lines[i]) == "" || strings.HasPrefix(strings.TrimSpace(lines[i]), "#")) {
				i++
			}
			if i >= len(lines) {
				return nil, problem(DockerfilePath, start, "line continuation at end of file")
			}
			line += " " + strings.TrimSpace(lines[i])
		}
		in, err := parseInstruction(start, line)
		if err != nil {
			return nil, err
		}
		if in.Cmd == "FROM" {
			st, err := newStage(len(df.Stages), in)
			if err != nil {
				return nil, err
			}
			df.Stages = append(df.Stages, st)
			continue
		}
		if len(df.Stages) == 0 {
			if in.Cmd != "ARG" {
				return nil, problem(DockerfilePath, start, "%s before the first FROM (only ARG may come first)", in.Cmd)
			}
			df.GlobalArgs = append(df.GlobalArgs, in)
			continue
		}
		st := df.Stages[len(df.Stages)-1]
		st.Instructions = append(st.Instructions, in)
	}
	if len(df.Stages) == 0 {
		return nil, problem(DockerfilePath, 0, "no FROM")
	}
	return df, nil
}

func parseInstruction(line int, text string) (Instruction, error) {
	kw, rest, _ := strings.Cut(text, " ")
	in := Instruction{Line: line, Cmd: strings.ToUpper(kw), Raw: strings.TrimSpace(rest), Flags: map[string]string{}}
	if !knownInstructions[in.Cmd] {
		return in, problem(DockerfilePath, line, "unknown instruction %q", kw)
	}
	if strings.Contains(in.Raw, "<<") && (in.Cmd == "RUN" || in.Cmd == "COPY" || in.Cmd == "ADD") {
		return in, problem(DockerfilePath, line, "heredocs are not supported by this checker")
	}
	rest = in.Raw
	if in.Cmd != "RUN" || strings.HasPrefix(rest, "--") {
		for strings.HasPrefix(rest, "--") {
			flag, after, _ := strings.Cut(rest, " ")
			name, value, _ := strings.Cut(strings.TrimPrefix(flag, "--"), "=")
			in.Flags[name] = value
			rest = strings.TrimSpace(after)
		}
	}
	if execForm[in.Cmd] && strings.HasPrefix(rest, "[") {
		if err := json.Unmarshal([]byte(rest), &in.Args); err != nil {
			return in, problem(DockerfilePath, line, "%s exec form is not a JSON string array: %v", in.Cmd, err)
		}
		in.Exec = true
		return in, nil
	}
	words, err := splitWords(rest)
	if err != nil {
		return in, problem(DockerfilePath, line, "%v", err)
	}
	in.Args = words
	if len(in.Args) == 0 && in.Cmd != "RUN" {
		return in, problem(DockerfilePath, line, "%s without arguments", in.Cmd)
	}
	return in, nil
}

func newStage(index int, in Instruction) (*Stage, error) {
	st := &Stage{Index: index, Line: in.Line}
	switch {
	case len(in.Args) == 1:
		st.Base = in.Args[0]
	case len(in.Args) == 3 && strings.EqualFold(in.Args[1], "AS"):
		st.Base, st.Name = in.Args[0], strings.ToLower(in.Args[2])
	default:
		return nil, problem(DockerfilePath, in.Line, "FROM wants `image [AS name]`, got %q", in.Raw)
	}
	return st, nil
}

// splitWords splits like a shell without expansion: whitespace separates
// words, quotes group and are removed, a backslash escapes one character.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// KeyValues reads LABEL/ENV/ARG arguments as key=value pairs (ARG may have
// no value; the legacy `ENV key value` form is accepted too).
func (in Instruction) KeyValues() map[string]string {
	out := map[string]string{}
	if in.Cmd == "ENV" && len(in.Args) >= 2 && !strings.Contains(in.Args[0], "=") {
		out[in.Args[0]] = strings.Join(in.Args[1:], " ")
		return out
	}
	for _, a := range in.Args {
		k, v, _ := strings.Cut(a, "=")
		out[k] = v
	}
	return out
}

// varRef finds $NAME and ${NAME...} references.
var varRef = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}|([A-Za-z_][A-Za-z0-9_]*))`)

// VarRefs returns the variable names a string references.
func VarRefs(s string) []string {
	var out []string
	for _, m := range varRef.FindAllStringSubmatch(s, -1) {
		if m[1] != "" {
			out = append(out, m[1])
		} else {
			out = append(out, m[2])
		}
	}
	return out
}

// Stage returns the stage named name (case-insensitive) or with that index.
func (df *Dockerfile) Stage(name string) *Stage {
	for _, st := range df.Stages {
		if st.Name != "" && st.Name == strings.ToLower(name) || fmt.Sprint(st.Index) == name {
			return st
		}
	}
	return nil
}

// Parent is the earlier stage this stage builds FROM, or nil for an image.
func (df *Dockerfile) Parent(st *Stage) *Stage {
	p := df.Stage(st.Base)
	if p == nil || p.Index >= st.Index {
		return nil
	}
	return p
}

// Chain is the stage and its ancestors, nearest first.
func (df *Dockerfile) Chain(st *Stage) []*Stage {
	var out []*Stage
	for s := st; s != nil; s = df.Parent(s) {
		out = append(out, s)
	}
	return out
}

// Workdir is the stage's final WORKDIR (inherited from its parent stage).
func (df *Dockerfile) Workdir(st *Stage) string {
	for _, s := range df.Chain(st) {
		for i := len(s.Instructions) - 1; i >= 0; i-- {
			if in := s.Instructions[i]; in.Cmd == "WORKDIR" {
				return in.Args[0]
			}
		}
	}
	return "/"
}

// Find returns the stage's instructions with the given keyword.
func (st *Stage) Find(cmd string) []Instruction {
	var out []Instruction
	for _, in := range st.Instructions {
		if in.Cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}
