package benchreport

import (
	"fmt"
	"math"
)

// Status is a row's verdict.
type Status int

const (
	Met     Status = iota
	NotMet         // measured, and the goal is not met
	Missing        // the benchmark or the value's metric is not in the output
	NoLimit        // the value is there, its limit is not
)

func (s Status) String() string {
	switch s {
	case Met:
		return "met"
	case NotMet:
		return "NOT MET"
	case NoLimit:
		return "limit not measured"
	}
	return "missing"
}

// Outcome is a row applied to an output.
type Outcome struct {
	Row    Row
	Status Status
	Value  float64 // in Row.Unit; valid unless Missing
	Limit  float64 // in Row.Unit; valid for Ratio and Overhead rows that are Met or NotMet
	// Ratio is Value/Limit (Ratio and Overhead rows with a limit).
	Ratio float64
	// Measured is what the goal is about: Ratio, Value − Limit, or Value.
	Measured float64
	// Budget is Measured as a share of what the goal allows: ≤ 1 (< 1
	// for a "<" goal) when met. +Inf when a "≥" goal's measure is ≤ 0.
	Budget float64
	// Detail says why a row is Missing or NoLimit.
	Detail string
}

// Evaluate applies rows to out.
func Evaluate(out *Output, rows []Row) []Outcome {
	res := make([]Outcome, 0, len(rows))
	for _, r := range rows {
		res = append(res, evaluate(out, r))
	}
	return res
}

func metric(res Result, ms ...Metric) (float64, bool) {
	for _, m := range ms {
		if v, ok := res.Metrics[m.Unit]; ok {
			if m.Scale != 0 {
				v *= m.Scale
			}
			return v, true
		}
	}
	return 0, false
}

func evaluate(out *Output, r Row) Outcome {
	o := Outcome{Row: r, Status: Missing}
	res, ok := out.Lookup(r.Bench)
	if !ok {
		o.Detail = r.Bench + " is not in the output"
		return o
	}
	v, ok := metric(res, r.Value...)
	if !ok {
		o.Detail = fmt.Sprintf("%s reports no %s", r.Bench, r.Value[0].Unit)
		return o
	}
	o.Value = v
	if r.Kind == Absolute {
		o.Measured = v
	} else {
		lb := r.LimitBench
		if lb == "" {
			lb = r.Bench
		}
		lres, ok := out.Lookup(lb)
		if !ok {
			o.Status, o.Detail = NoLimit, lb+" is not in the output"
			return o
		}
		l, ok := metric(lres, r.Limit)
		if !ok {
			o.Status, o.Detail = NoLimit, fmt.Sprintf("%s reports no %s", lb, r.Limit.Unit)
			return o
		}
		o.Limit = l
		o.Ratio = v / l
		if r.Kind == Overhead {
			o.Measured = v - l
		} else {
			o.Measured = o.Ratio
		}
	}
	switch r.Op {
	case AtLeast:
		if o.Measured <= 0 {
			o.Budget = math.Inf(1)
		} else {
			o.Budget = r.Goal / o.Measured
		}
	default:
		o.Budget = o.Measured / r.Goal
	}
	met := false
	switch r.Op {
	case AtMost:
		met = o.Measured <= r.Goal
	case AtLeast:
		met = o.Measured >= r.Goal
	case Below:
		met = o.Measured < r.Goal
	}
	o.Status = NotMet
	if met {
		o.Status = Met
	}
	return o
}

// Tally counts outcomes by status.
func Tally(outs []Outcome) map[Status]int {
	t := map[Status]int{}
	for _, o := range outs {
		t[o.Status]++
	}
	return t
}
