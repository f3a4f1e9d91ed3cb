package benchreport

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Text writes the table make bench prints: one line per row with its
// value, limit, ratio, goal, budget (Outcome.Budget) and verdict, the
// reason under a missing row, and a count of each verdict.
func Text(w io.Writer, outs []Outcome) error {
	head := Cells{Row: "row", Value: "value", Limit: "limit", Ratio: "ratio", Goal: "goal", Budget: "budget", Status: "result"}
	lines := []Cells{head}
	for _, o := range outs {
		lines = append(lines, o.Cells())
	}
	cols := func(c Cells) []string {
		return []string{c.Row, c.Value, c.Limit, c.Ratio, c.Goal, c.Budget, c.Status}
	}
	width := make([]int, len(cols(head)))
	for _, c := range lines {
		for i, s := range cols(c) {
			width[i] = max(width[i], utf8.RuneCountInString(s))
		}
	}
	var b strings.Builder
	for i, c := range lines {
		for j, s := range cols(c) {
			if j > 0 {
				b.WriteString("  ")
			}
			if j == len(width)-1 {
				b.WriteString(s)
				break
			}
			b.WriteString(s + strings.Repeat(" ", width[j]-utf8.RuneCountInString(s)))
		}
		b.WriteByte('\n')
		if i > 0 && outs[i-1].Detail != "" {
			fmt.Fprintf(&b, "%s  ↳ %s\n", strings.Repeat(" ", width[0]), outs[i-1].Detail)
		}
	}
	b.WriteString(Summary(outs) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is one sentence counting the verdicts.
func Summary(outs []Outcome) string {
	t := Tally(outs)
	s := fmt.Sprintf("%d of %d checks met, %d not met", t[Met], len(outs), t[NotMet])
	if t[NoLimit] > 0 {
		s += fmt.Sprintf(", %d without a measured limit", t[NoLimit])
	}
	if t[Missing] > 0 {
		s += fmt.Sprintf(", %d missing", t[Missing])
	}
	return s + "."
}
