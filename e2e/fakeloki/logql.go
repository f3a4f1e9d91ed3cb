package fakeloki

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// The LogQL subset: a stream selector followed by line filters, the json
// parser and label filters. Anything else is a parse error (HTTP 400).

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tOp // = != =~ !~ |= |~
	tPunct
)

type token struct {
	kind tokKind
	text string
	pos  int
}

func (t token) String() string {
	if t.kind == tEOF {
		return "end of input"
	}
	return strconv.Quote(t.text)
}

type lexer struct {
	src string
	pos int
}

func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) && unicode.IsSpace(rune(l.src[l.pos])) {
		l.pos++
	}
	start := l.pos
	if l.pos >= len(l.src) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := l.src[l.pos]
	two := ""
	if l.pos+1 < len(l.src) {
		two = l.src[l.pos : l.pos+2]
	}
	switch {
	case two == "!=" || two == "=~" || two == "!~" || two == "|=" || two == "|~":
		l.pos += 2
		return token{tOp, two, start}, nil
	case c == '=':
		l.pos++
		return token{tOp, "=", start}, nil
	case strings.IndexByte("{},|()", c) >= 0:
		l.pos++
		return token{tPunct, string(c), start}, nil
	case c == '"':
		i := l.pos + 1
		for i < len(l.src) && l.src[i] != '"' {
			if l.src[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(l.src) {
			return token{}, fmt.Errorf("unterminated string at col %d", start+1)
		}
		v, err := strconv.Unquote(l.src[l.pos : i+1])
		if err != nil {
			return token{}, fmt.Errorf("invalid string at col %d: %v", start+1, err)
		}
		l.pos = i + 1
		return token{tString, v, start}, nil
	case c == '`':
		i := strings.IndexByte(l.src[l.pos+1:], '`')
		if i < 0 {
			return token{}, fmt.Errorf("unterminated raw string at col %d", start+1)
		}
		v := l.src[l.pos+1 : l.pos+1+i]
		l.pos += i + 2
		return token{tString, v, start}, nil
	case c == '_' || unicode.IsLetter(rune(c)):
		i := l.pos
		for i < len(l.src) && (l.src[i] == '_' || l.src[i] == '.' || unicode.IsLetter(rune(l.src[i])) || unicode.IsDigit(rune(l.src[i]))) {
			i++
		}
		l.pos = i
		return token{tIdent, l.src[start:i], start}, nil
	}
	return token{}, fmt.Errorf("unexpected character %q at col %d", c, start+1)
}

type parser struct {
	lex lexer
	tok token
	err error
}

func (p *parser) next() {
	if p.err != nil {
		return
	}
	p.tok, p.err = p.lex.next()
	if p.err != nil {
		p.tok = token{kind: tEOF}
	}
}

func (p *parser) errorf(format string, a ...any) error {
	if p.err != nil {
		return fmt.Errorf("parse error : %v", p.err)
	}
	return fmt.Errorf("parse error at line 1, col %d: %s", p.tok.pos+1, fmt.Sprintf(format, a...))
}

func (p *parser) expect(kind tokKind, text string) error {
	if p.tok.kind != kind || (text != "" && p.tok.text != text) {
		want := text
		if want == "" {
			want = map[tokKind]string{tIdent: "identifier", tString: "string"}[kind]
		}
		return p.errorf("syntax error: unexpected %s, expecting %s", p.tok, want)
	}
	p.next()
	return nil
}

// matcher is one `name op "value"` (selector matcher or label filter).
type matcher struct {
	name, op, value string
	re              *regexp.Regexp // anchored, for =~ and !~
}

func newMatcher(name, op, value string) (matcher, error) {
	m := matcher{name: name, op: op, value: value}
	if op == "=~" || op == "!~" {
		re, err := regexp.Compile("^(?:" + value + ")$")
		if err != nil {
			return m, fmt.Errorf("invalid regex %q: %v", value, err)
		}
		m.re = re
	}
	return m, nil
}

func (m matcher) matches(v string) bool {
	switch m.op {
	case "=":
		return v == m.value
	case "!=":
		return v != m.value
	case "=~":
		return m.re.MatchString(v)
	default:
		return !m.re.MatchString(v)
	}
}

func (p *parser) matcher() (matcher, error) {
	name := p.tok.text
	if err := p.expect(tIdent, ""); err != nil {
		return matcher{}, err
	}
	if !labelNameRE.MatchString(name) {
		return matcher{}, p.errorf("invalid label name %q", name)
	}
	op := p.tok.text
	if p.tok.kind != tOp || op == "|=" || op == "|~" {
		return matcher{}, p.errorf("syntax error: unexpected %s, expecting = or != or =~ or !~", p.tok)
	}
	p.next()
	val := p.tok.text
	if err := p.expect(tString, ""); err != nil {
		return matcher{}, err
	}
	m, err := newMatcher(name, op, val)
	if err != nil {
		return m, p.errorf("%v", err)
	}
	return m, nil
}

func (p *parser) selector() ([]matcher, error) {
	if err := p.expect(tPunct, "{"); err != nil {
		return nil, err
	}
	var ms []matcher
	for p.tok.kind != tPunct || p.tok.text != "}" {
		if len(ms) > 0 {
			if err := p.expect(tPunct, ","); err != nil {
				return nil, err
			}
		}
		m, err := p.matcher()
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	p.next()
	return ms, nil
}

// stage is one pipeline step.
type stage struct {
	kind    string // "line", "json", "labels"
	op      string // line filter operator
	value   string
	re      *regexp.Regexp
	params  []jsonParam
	filters []matcher // conjunction
}

type jsonParam struct{ label, path string }

// logQuery is a parsed log query.
type logQuery struct {
	selector []matcher
	stages   []stage
}

func parseLogQL(q string) (*logQuery, error) {
	p := &parser{lex: lexer{src: q}}
	p.next()
	sel, err := p.selector()
	if err != nil {
		return nil, err
	}
	if !selectsSomething(sel) {
		return nil, fmt.Errorf("parse error : queries require at least one regexp or equality matcher that does not have an empty-compatible value. For instance, app=~\".*\" does not meet this requirement, but app=~\".+\" will")
	}
	lq := &logQuery{selector: sel}
	for p.tok.kind != tEOF {
		st, err := p.stage()
		if err != nil {
			return nil, err
		}
		lq.stages = append(lq.stages, st)
	}
	if p.err != nil {
		return nil, p.errorf("")
	}
	return lq, nil
}

func selectsSomething(ms []matcher) bool {
	for _, m := range ms {
		if (m.op == "=" || m.op == "=~") && !m.matches("") {
			return true
		}
	}
	return false
}

func (p *parser) stage() (stage, error) {
	switch {
	case p.tok.kind == tOp && (p.tok.text == "|=" || p.tok.text == "!=" || p.tok.text == "|~" || p.tok.text == "!~"):
		st := stage{kind: "line", op: p.tok.text}
		p.next()
		st.value = p.tok.text
		if err := p.expect(tString, ""); err != nil {
			return st, err
		}
		if st.op == "|~" || st.op == "!~" {
			re, err := regexp.Compile(st.value)
			if err != nil {
				return st, p.errorf("invalid regex %q: %v", st.value, err)
			}
			st.re = re
		}
		return st, nil
	case p.tok.kind == tPunct && p.tok.text == "|":
		p.next()
		if p.tok.kind == tIdent && p.tok.text == "json" {
			p.next()
			return p.jsonStage()
		}
		if p.tok.kind == tIdent && isUnsupportedStage(p.tok.text) {
			return stage{}, p.errorf("fakeloki does not implement the %s stage", p.tok.text)
		}
		st := stage{kind: "labels"}
		for {
			m, err := p.matcher()
			if err != nil {
				return st, err
			}
			st.filters = append(st.filters, m)
			if p.tok.kind == tPunct && p.tok.text == "," || p.tok.kind == tIdent && p.tok.text == "and" {
				p.next()
				continue
			}
			return st, nil
		}
	}
	return stage{}, p.errorf("syntax error: unexpected %s", p.tok)
}

func isUnsupportedStage(s string) bool {
	switch s {
	case "logfmt", "regexp", "pattern", "unpack", "line_format", "label_format", "drop", "keep", "decolorize", "unwrap":
		return true
	}
	return false
}

func (p *parser) jsonStage() (stage, error) {
	st := stage{kind: "json"}
	for p.tok.kind == tIdent {
		label := p.tok.text
		p.next()
		if err := p.expect(tOp, "="); err != nil {
			return st, err
		}
		path := p.tok.text
		if err := p.expect(tString, ""); err != nil {
			return st, err
		}
		st.params = append(st.params, jsonParam{label: label, path: path})
		if p.tok.kind == tPunct && p.tok.text == "," {
			p.next()
			continue
		}
		break
	}
	return st, nil
}
