package benchreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatNumber prints a measurement with three or four significant
// digits, and thousands separators from 1,000 up: 0.129, 8.67, 103.3,
// 75,498.
func FormatNumber(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	a := math.Abs(v)
	switch {
	case a >= 1000:
		return groupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	case a >= 100:
		return trimZeros(strconv.FormatFloat(v, 'f', 1, 64))
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 1 || a == 0:
		return trimZeros(strconv.FormatFloat(v, 'f', 2, 64))
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// FormatRatio prints a ratio with two decimals (three significant digits
// below 0.1).
func FormatRatio(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	if a := math.Abs(v); a < 0.1 && a != 0 {
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// FormatGoal prints a goal as short as it is: 0.5, 1.5, 2, 100, 10,000.
func FormatGoal(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if math.Abs(v) >= 1000 && v == math.Trunc(v) {
		return groupThousands(s)
	}
	return s
}

// FormatBudget prints Outcome.Budget as a percentage.
func FormatBudget(b float64) string {
	if math.IsInf(b, 1) {
		return "∞"
	}
	return strconv.FormatFloat(math.Max(b, 0)*100, 'f', 0, 64) + "%"
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Cells are an outcome's table cells.
type Cells struct {
	Row, Bench, Value, Limit, Ratio, Goal, Budget, Status string
}

// Cells renders o for the tables. Absent numbers are "—".
func (o Outcome) Cells() Cells {
	r := o.Row
	c := Cells{Row: r.Name(), Bench: r.Bench, Value: "—", Limit: "—", Ratio: "—", Goal: r.GoalText(), Budget: "—", Status: o.Status.String()}
	if o.Status == Missing {
		return c
	}
	c.Value = FormatNumber(o.Value) + " " + r.Unit
	switch {
	case r.Kind == Absolute:
		c.Limit = "none"
	case o.Status == NoLimit:
		c.Limit = "not measured"
	default:
		c.Limit = FormatNumber(o.Limit) + " " + r.Unit
		c.Ratio = FormatRatio(o.Ratio)
		if r.Kind == Overhead {
			c.Ratio += fmt.Sprintf(" (overhead %s%s %s)", sign(o.Measured), FormatNumber(o.Measured), r.Unit)
		}
	}
	if o.Status == Met || o.Status == NotMet {
		c.Budget = FormatBudget(o.Budget)
	}
	return c
}

func sign(v float64) string {
	if v >= 0 {
		return "+"
	}
	return ""
}
