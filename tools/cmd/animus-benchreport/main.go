// Command animus-benchreport reads the output of `go test -bench` over
// e2e/bench, prints issue 19's rows (value, limit, ratio, goal, verdict),
// and writes docs/benchmarks.md and the chart docs/benchmarks.svg (see
// package tools/benchreport):
//
//	animus-benchreport [-in FILE] [-md FILE] [-svg FILE] [-status N]
//	    [-loadavg-start "1.0 0.5 0.2"] [-command CMD] [-commit REV]
//
// make bench runs it after go test, whose output it tees to a file. A row
// whose benchmark or metric is missing is reported, not an error: the
// command exits 0 whatever the goals' verdicts, 1 when it cannot read or
// write, 2 on usage errors. -status is go test's exit status, recorded in
// the Markdown (make bench fails on it itself).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/tools/benchreport"
)

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("animus-benchreport", flag.ContinueOnError)
	in := fs.String("in", "-", "go test -bench output to read (- for stdin)")
	mdPath := fs.String("md", "docs/benchmarks.md", "Markdown report to write (\"\" for none)")
	svgPath := fs.String("svg", "docs/benchmarks.svg", "SVG chart to write (\"\" for none)")
	status := fs.Int("status", 0, "go test's exit status, recorded in the report")
	loadStart := fs.String("loadavg-start", "", "/proc/loadavg when the run started")
	command := fs.String("command", "", "the go test command, recorded in the report")
	commit := fs.String("commit", "", "the commit to record (default: git rev-parse --short HEAD, -dirty when the tree has changes)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: animus-benchreport [-in FILE] [-md FILE] [-svg FILE] [-status N] [-loadavg-start S] [-command CMD] [-commit REV]")
		return 2
	}
	var r io.Reader = os.Stdin
	if *in != "-" {
		f, err := os.Open(*in)
		if err != nil {
			fmt.Fprintln(os.Stderr, "animus-benchreport:", err)
			return 1
		}
		defer f.Close()
		r = f
	}
	out, err := benchreport.Parse(r)
	if err != nil {
		fmt.Fprintln(os.Stderr, "animus-benchreport: reading the benchmark output:", err)
		return 1
	}
	outcomes := benchreport.Evaluate(out, benchreport.Rows)
	fmt.Println("== issue 19: benchmarks against their goals (budget: share of what the goal allows; ≤ 100% is met)")
	if err := benchreport.Text(os.Stdout, outcomes); err != nil {
		fmt.Fprintln(os.Stderr, "animus-benchreport:", err)
		return 1
	}

	if *commit == "" {
		*commit = gitCommit(*mdPath, *svgPath)
	}
	m := benchreport.ReadMachine(out.Header)
	m.GoVersion = goVersion()
	m.LoadStart = benchreport.LoadAvg(*loadStart)
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.LoadEnd = benchreport.LoadAvg(string(b))
	}
	date := time.Now()
	rep := benchreport.Report{Outcomes: outcomes, Output: out, Commit: *commit, Date: date, Machine: m,
		Command: *command, TestStatus: *status}
	if *svgPath != "" {
		var buf bytes.Buffer
		title := fmt.Sprintf("animus-plugins benchmarks vs goals · %s · %s", *commit, date.UTC().Format("2006-01-02 15:04 MST"))
		if err := benchreport.SVG(&buf, outcomes, title); err != nil || write(*svgPath, buf.Bytes()) != nil {
			return 1
		}
		if *mdPath != "" {
			rel, err := filepath.Rel(filepath.Dir(*mdPath), *svgPath)
			if err != nil {
				rel = *svgPath
			}
			rep.SVG = filepath.ToSlash(rel)
		}
	}
	if *mdPath != "" {
		var buf bytes.Buffer
		if err := benchreport.Markdown(&buf, rep); err != nil || write(*mdPath, buf.Bytes()) != nil {
			return 1
		}
	}
	for _, p := range []string{*mdPath, *svgPath} {
		if p != "" {
			fmt.Println("wrote", p)
		}
	}
	return 0
}

func write(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "animus-benchreport:", err)
		return err
	}
	return nil
}

// gitCommit is HEAD's short hash, with -dirty when tracked or untracked
// files differ from it; the report's own outputs do not count, or every
// run after the first would be stamped -dirty.
func gitCommit(outputs ...string) string {
	head, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(head))
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return commit
	}
	ignore := map[string]bool{}
	for _, p := range outputs {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if rel, err := filepath.Rel(strings.TrimSpace(string(top)), abs); err == nil {
				ignore[filepath.ToSlash(rel)] = true
			}
		}
	}
	st, err := exec.Command("git", "status", "--porcelain").Output()
	if err != nil {
		return commit + "-dirty?"
	}
	for line := range strings.SplitSeq(string(st), "\n") {
		if len(line) < 4 {
			continue
		}
		path := line[3:]
		if _, to, ok := strings.Cut(path, " -> "); ok {
			path = to
		}
		if !ignore[strings.Trim(path, `"`)] {
			return commit + "-dirty"
		}
	}
	return commit
}

// goVersion is the version of the go command on PATH (the one make bench
// ran the benchmarks with), else this binary's.
func goVersion() string {
	if v, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil && len(bytes.TrimSpace(v)) > 0 {
		return strings.TrimSpace(string(v))
	}
	return runtime.Version()
}
