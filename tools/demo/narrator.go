package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// Narrator prints a demo as it runs: headings, prose, and the frames each
// step put on the wire, shortened to fit a terminal line.
type Narrator struct {
	w     io.Writer
	color bool
	width int
	seen  map[*fakehost.Host]int
	names map[*fakehost.Host]string // plugin name shown on frame lines
}

// NewNarrator writes to w, in colour when w is a terminal.
func NewNarrator(w io.Writer) *Narrator {
	color := false
	if f, ok := w.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == "" {
			color = true
		}
	}
	return &Narrator{w: w, color: color, width: 150, seen: map[*fakehost.Host]int{}, names: map[*fakehost.Host]string{}}
}

const (
	bold  = "\033[1m"
	dim   = "\033[2m"
	green = "\033[32m"
	cyan  = "\033[36m"
	red   = "\033[31m"
	reset = "\033[0m"
)

func (n *Narrator) paint(code, s string) string {
	if !n.color {
		return s
	}
	return code + s + reset
}

// Title starts a plugin's session.
func (n *Narrator) Title(s string) {
	fmt.Fprintf(n.w, "\n%s\n%s\n", n.paint(bold, "━━ "+s+" "+strings.Repeat("━", max(0, 60-len(s)))), "")
}

// Step announces one step.
func (n *Narrator) Step(format string, args ...any) {
	fmt.Fprintf(n.w, "%s %s\n", n.paint(cyan, "▸"), fmt.Sprintf(format, args...))
}

// Say prints a line of explanation.
func (n *Narrator) Say(format string, args ...any) {
	fmt.Fprintf(n.w, "  %s\n", n.paint(dim, fmt.Sprintf(format, args...)))
}

// OK and Bad print an outcome.
func (n *Narrator) OK(format string, args ...any) {
	fmt.Fprintf(n.w, "  %s %s\n", n.paint(green, "✓"), fmt.Sprintf(format, args...))
}

// Bad reports a failed expectation.
func (n *Narrator) Bad(format string, args ...any) {
	fmt.Fprintf(n.w, "  %s %s\n", n.paint(red, "✗"), fmt.Sprintf(format, args...))
}

// Frames prints the frames h exchanged since the last call.
func (n *Narrator) Frames(h *fakehost.Host) {
	n.FramesExcept(h, "")
}

// FramesExcept is Frames without the lines containing skip (when not
// empty): an exchange the caller narrates in its own words.
func (n *Narrator) FramesExcept(h *fakehost.Host, skip string) {
	lines, next := h.WireLines(n.seen[h])
	n.seen[h] = next
	for _, l := range lines {
		if skip != "" && strings.Contains(l, skip) {
			continue
		}
		// "15:04:05.000000 >> {...}": drop the time stamp, keep the arrow.
		if len(l) > 16 {
			l = l[16:]
		}
		l = n.shorten(l)
		name := n.names[h]
		if name == "" {
			name = "plugin"
		}
		switch {
		case strings.HasPrefix(l, ">>"):
			l = n.paint(dim, "    host → "+name+" ") + l[3:]
		case strings.HasPrefix(l, "<<"):
			l = n.paint(dim, "    "+name+" → host ") + l[3:]
		default:
			l = "    " + n.paint(red, l)
		}
		fmt.Fprintln(n.w, l)
	}
}

// Name makes h's frame lines say which plugin they are from or to
// (the story drives seven at once).
func (n *Narrator) Name(h *fakehost.Host, name string) { n.names[h] = name }

func (n *Narrator) shorten(s string) string {
	if len(s) <= n.width {
		return s
	}
	cut := n.width - 12
	for cut > 0 && !utf8.RuneStart(s[cut]) { // never split a character
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d B)", len(s))
}

// JSON renders v compactly for prose.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
