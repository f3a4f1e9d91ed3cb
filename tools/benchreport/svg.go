package benchreport

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// The chart's geometry, in SVG user units.
const (
	svgWidth   = 1200
	svgBarX    = 240 // where the bars start (budget 0)
	svgBarW    = 420 // the width of budget 0 … svgMaxScale
	svgTop     = 86  // first row
	svgRowH    = 44
	svgMaxBudg = 3.0 // bars past 300% are cut
	svgTextX   = svgBarX + svgBarW + 140
	colorMet   = "#2e7d32"
	colorNot   = "#c62828"
	colorNone  = "#9e9e9e"
)

func svgX(budget float64) float64 {
	b := math.Min(math.Max(budget, 0), svgMaxBudg)
	return svgBarX + b/svgMaxBudg*svgBarW
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// SVG writes the chart: one horizontal bar per row whose length is the
// row's budget (Outcome.Budget), a goal line at 100%, green bars for goals
// met, red for goals not met, a grey outline for rows not measured, and
// beside each bar its value, limit, ratio and goal. title is the first
// line (e.g. the commit and date).
func SVG(w io.Writer, outs []Outcome, title string) error {
	height := svgTop + len(outs)*svgRowH + 56
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, height)
	fmt.Fprintf(&b, `<text x="12" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", esc(title))
	fmt.Fprintf(&b, `<text x="12" y="44" fill="#444">%s</text>`+"\n",
		esc("Each bar: the measurement as a share of what its goal allows. Left of the goal line: met. "+Summary(outs)))

	// Grid: every 50%, the goal line at 100%.
	bottom := svgTop + len(outs)*svgRowH
	for i := 0; i <= int(svgMaxBudg*2); i++ {
		budget := float64(i) / 2
		x := svgX(budget)
		if budget == 1 {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e0e0e0"/>`+"\n", x, svgTop-8, x, bottom)
		if i%2 == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#666">%.0f%%</text>`+"\n", x, svgTop-14, budget*100)
		}
	}
	gx := svgX(1)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000" stroke-width="2" stroke-dasharray="6 3"/>`+"\n", gx, svgTop-8, gx, bottom)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" font-weight="bold">goal (100%%)</text>`+"\n", gx, svgTop-14)

	for i, o := range outs {
		y := svgTop + i*svgRowH
		c := o.Cells()
		fmt.Fprintf(&b, `<text x="12" y="%d" font-weight="bold">%s</text>`+"\n", y+19, esc(c.Row))
		fmt.Fprintf(&b, `<text x="12" y="%d" font-size="10" fill="#666">%s</text>`+"\n", y+33, esc(shorten(strings.TrimPrefix(o.Row.Bench, "Benchmark"), 40)))
		switch o.Status {
		case Met, NotMet:
			color := colorNot
			if o.Status == Met {
				color = colorMet
			}
			end := svgX(o.Budget)
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="22" fill="%s"><title>%s</title></rect>`+"\n",
				svgBarX, y+6, end-svgBarX, color, esc(c.Row+": "+c.Budget+" of the goal's budget, "+c.Status))
			if o.Budget > svgMaxBudg { // cut: a white zigzag at the end says so
				fmt.Fprintf(&b, `<path d="M%.1f %d l-6 5.5 l6 5.5 l-6 5.5 l6 5.5" fill="none" stroke="#fff" stroke-width="2"/>`+"\n", end-4, y+6)
			}
			label := c.Budget + " " + strings.ToLower(c.Status)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="%s" font-weight="bold">%s</text>`+"\n", end+5, y+21, color, esc(label))
		default:
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="22" fill="none" stroke="%s" stroke-dasharray="4 3"/>`+"\n",
				svgBarX, y+6, gx-svgBarX, colorNone)
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555">%s</text>`+"\n", svgBarX+8, y+21, esc(c.Status))
		}
		line1 := "value " + c.Value + " · limit " + c.Limit
		line2 := "ratio " + c.Ratio + " · goal " + c.Goal
		switch {
		case o.Status == Missing:
			line1 = o.Detail
			line2 = "goal " + c.Goal
		case o.Row.Kind == Absolute:
			line1 = "value " + c.Value + " (no limit: an absolute goal)"
			line2 = "goal " + c.Goal
		case o.Status == NoLimit:
			line1 = "value " + c.Value + " · limit not measured"
			line2 = "(no " + o.Row.Limit.Unit + ") · goal " + c.Goal
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", svgTextX, y+16, esc(shorten(line1, 64)))
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#444">%s</text>`+"\n", svgTextX, y+31, esc(shorten(line2, 64)))
	}

	ly := bottom + 24
	legend := []struct{ color, text string }{{colorMet, "met"}, {colorNot, "not met"}, {colorNone, "not measured"}}
	x := 12
	for _, l := range legend {
		if l.color == colorNone {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="14" fill="none" stroke="%s" stroke-dasharray="3 2"/>`+"\n", x, ly-11, l.color)
		} else {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="14" fill="%s"/>`+"\n", x, ly-11, l.color)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", x+20, ly, l.text)
		x += 40 + 7*len(l.text)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#444">%s</text>`+"\n", x+10, ly,
		esc("≤ goals: measured ÷ goal; ≥ goals: goal ÷ ratio; bars past 300% are cut (zigzag)."))
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
