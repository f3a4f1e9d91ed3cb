package benchreport

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Result is one result line of go test -bench.
type Result struct {
	Name       string // as printed, with the -GOMAXPROCS suffix when go test added one
	Pkg        string // the "pkg:" header line above it
	Iterations int64
	Metrics    map[string]float64 // unit → value: "ns/op", "http-req/s", "p50-µs", …
}

// Output is go test -bench's output, parsed.
type Output struct {
	Header  map[string]string // goos, goarch, pkg, cpu: the last of each
	Results []Result
	// Raw holds the lines worth quoting: the header lines, the result
	// lines, PASS/FAIL/ok lines and --- FAIL/SKIP lines.
	Raw []string
	// Failed is true when go test said FAIL anywhere.
	Failed bool
}

// Parse reads go test -bench output. Lines it does not recognise (logs, a
// child's stderr) are skipped. A result whose name was printed on a line
// of its own (go test -v, or a child writing between the name and the
// numbers) is joined to the numbers on the following line.
func Parse(r io.Reader) (*Output, error) {
	out := &Output{Header: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	pending := "" // a benchmark name still waiting for its numbers
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		first := fields[0]
		switch {
		case strings.HasPrefix(line, "goos: "), strings.HasPrefix(line, "goarch: "),
			strings.HasPrefix(line, "pkg: "), strings.HasPrefix(line, "cpu: "):
			k, v, _ := strings.Cut(line, ": ")
			out.Header[k] = strings.TrimSpace(v)
			out.Raw = append(out.Raw, line)
			continue
		case first == "PASS" || first == "FAIL" || first == "ok" ||
			strings.HasPrefix(line, "--- FAIL") || strings.HasPrefix(line, "--- SKIP"):
			if first == "FAIL" || strings.HasPrefix(line, "--- FAIL") {
				out.Failed = true
			}
			out.Raw = append(out.Raw, line)
			pending = ""
			continue
		}
		if strings.HasPrefix(first, "Benchmark") && line[0] == 'B' {
			if res, ok := parseNumbers(fields[1:]); ok {
				res.Name = first
				res.Pkg = out.Header["pkg"]
				out.Results = append(out.Results, res)
				out.Raw = append(out.Raw, line)
				pending = ""
			} else {
				pending = first
			}
			continue
		}
		if pending != "" && (line[0] == ' ' || line[0] == '\t') {
			if res, ok := parseNumbers(fields); ok {
				res.Name = pending
				res.Pkg = out.Header["pkg"]
				out.Results = append(out.Results, res)
				out.Raw = append(out.Raw, pending+"\t"+strings.TrimSpace(line))
				pending = ""
			}
		}
	}
	return out, sc.Err()
}

// parseNumbers reads "<iterations> <value> <unit> <value> <unit> …".
func parseNumbers(f []string) (Result, bool) {
	if len(f) < 3 || len(f)%2 == 0 {
		return Result{}, false
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return Result{}, false
	}
	res := Result{Iterations: n, Metrics: map[string]float64{}}
	for i := 1; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Result{}, false
		}
		res.Metrics[f[i+1]] = v
	}
	return res, true
}

// BaseName strips go test's -GOMAXPROCS suffix when name is base plus
// "-<digits>": BaseName("BenchmarkX/batch-1-2", "BenchmarkX/batch-1") is
// true. (go test prints no suffix when GOMAXPROCS is 1, so the suffix
// cannot be stripped blindly: "batch-1" would lose its 1.)
func BaseName(name, base string) bool {
	if name == base {
		return true
	}
	rest, ok := strings.CutPrefix(name, base+"-")
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Lookup returns the result of the benchmark named base (without the
// -GOMAXPROCS suffix). When the output holds it more than once (-count),
// each metric is the median of its values.
func (o *Output) Lookup(base string) (Result, bool) {
	var found []Result
	for _, r := range o.Results {
		if BaseName(r.Name, base) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return Result{}, false
	case 1:
		return found[0], true
	}
	merged := Result{Name: found[0].Name, Pkg: found[0].Pkg, Metrics: map[string]float64{}}
	values := map[string][]float64{}
	var iters []float64
	for _, r := range found {
		iters = append(iters, float64(r.Iterations))
		for k, v := range r.Metrics {
			values[k] = append(values[k], v)
		}
	}
	merged.Iterations = int64(median(iters))
	for k, vs := range values {
		merged.Metrics[k] = median(vs)
	}
	return merged, true
}

func median(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
