package compat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// Options configure Generate.
type Options struct {
	// BinDir holds the built binaries (bin/animus-<dir>).
	BinDir string
	// Schemas validate every frame the probes and the runner see.
	Schemas *schemacheck.Set
	// Log receives progress and the runner's per-scenario lines; nil
	// discards them.
	Log io.Writer
}

// Row is one plugin's part of the matrix.
type Row struct {
	Plugin Plugin
	// Missing is set when bin/ has no binary for the plugin; the row then
	// says so instead of failing the whole run.
	Missing string
	// Error is set when the binary could not be probed or run; the
	// command exits non-zero after writing the matrix.
	Error string
	Probe *Probe
	// Runs are the measurements under each daemon line, in the order of
	// measuredLines.
	Runs        []LineRun
	Lines       []DaemonLine
	Differences []Difference
}

// Matrix is the whole generated document's content.
type Matrix struct {
	// Versions maps each binary version seen (git describe, stamped by the
	// Makefile) to the plugins that report it.
	Versions map[string][]string
	Rows     []Row
}

// Failed reports whether any row could not be probed or run.
func (m *Matrix) Failed() bool {
	for _, r := range m.Rows {
		if r.Error != "" {
			return true
		}
	}
	return false
}

// Generate probes and runs every plugin's binary in turn (one at a time:
// the conformance scenarios are timing-sensitive on a small machine).
func Generate(ctx context.Context, o Options) (*Matrix, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	m := &Matrix{Versions: map[string][]string{}}
	for _, p := range Plugins() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		row := Row{Plugin: p, Lines: DaemonLines(p.Dir), Differences: DifferencesOf(p.Dir)}
		bin := filepath.Join(o.BinDir, p.Binary())
		if _, err := os.Stat(bin); errors.Is(err, os.ErrNotExist) {
			row.Missing = fmt.Sprintf("bin/%s is not built (`make build`)", p.Binary())
			fmt.Fprintf(o.Log, "compat: %s: binary missing\n", p.Binary())
			m.Rows = append(m.Rows, row)
			continue
		}
		fmt.Fprintf(o.Log, "compat: %s\n", p.Binary())
		if err := row.fill(ctx, bin, o); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			row.Error = firstLine(err.Error())
			fmt.Fprintf(o.Log, "compat: %s: %v\n", p.Binary(), err)
		}
		if row.Probe != nil {
			v := row.Probe.Manifest.Version
			m.Versions[v] = append(m.Versions[v], p.Binary())
		}
		m.Rows = append(m.Rows, row)
	}
	return m, nil
}

func (r *Row) fill(ctx context.Context, bin string, o Options) error {
	env := map[string]string{}
	if r.Plugin.Upstream != nil {
		upEnv, stop, err := r.Plugin.Upstream(ctx)
		if err != nil {
			return err
		}
		defer stop()
		env = upEnv
	}
	pr, err := probeBinary(ctx, r.Plugin, bin, env, o.Schemas)
	if err != nil {
		return err
	}
	r.Probe = pr
	if pr.Manifest.Name != r.Plugin.Name() || pr.Manifest.PluginKind != r.Plugin.Kind {
		return fmt.Errorf("manifest says %s (%s), want %s (%s)", pr.Manifest.Name, pr.Manifest.PluginKind, r.Plugin.Name(), r.Plugin.Kind)
	}
	r.Runs, err = measureLines(ctx, r.Plugin, bin, env, o.Schemas, pr.Manifest, o.Log)
	return err
}

// Run returns the measurement under a daemon line, or nil.
func (r *Row) Run(line string) *LineRun {
	for i := range r.Runs {
		if r.Runs[i].Line == line {
			return &r.Runs[i]
		}
	}
	return nil
}

// VersionLine is the one line of the document that names the binaries'
// version; everything else is a function of the code and the data tables.
func (m *Matrix) VersionLine() string {
	if len(m.Versions) == 0 {
		return VersionPrefix + "none (no binary was found)"
	}
	vs := make([]string, 0, len(m.Versions))
	for v := range m.Versions {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	if len(vs) == 1 {
		return fmt.Sprintf("%s`%s`", VersionPrefix, vs[0])
	}
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		names := append([]string(nil), m.Versions[v]...)
		sort.Strings(names)
		parts = append(parts, fmt.Sprintf("`%s` (%s)", v, strings.Join(names, ", ")))
	}
	return VersionPrefix + "mixed, rebuild with `make build`: " + strings.Join(parts, "; ")
}

// VersionPrefix starts the version line; tests that compare a regenerated
// matrix with the committed one mask the rest of that line.
const VersionPrefix = "Binaries (git describe, from each `--manifest`): "

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// scenarioTimeout is the per-scenario bound: only a hung scenario reaches
// it (the queue-v2 suite's concurrency scenarios take seconds).
const scenarioTimeout = time.Minute

// Conformance is the runner's verdict on one binary under one daemon
// line: what `animus-plugin-conformance --daemon` would print, without
// timings.
type Conformance struct {
	Suites  []string // the suites of the scenarios that ran, in run order
	Total   int
	Passed  int
	Failed  int
	Skipped int
	// FailedIDs are in run order; SkippedIDs carry the runner's reason.
	FailedIDs  []string
	SkippedIDs []ScenarioNote
}

// ScenarioNote is a scenario id with the reason the runner gave.
type ScenarioNote struct{ ID, Reason string }

// runConformance drives the conformance runner in process as the command
// and conformancetest.RequireAllPassUnder do, on a target Prepare made:
// the scenarios with every process spawned under daemon's handshakes, each
// in a store of its own when stores.Isolate is set (Plugin.Isolate), with
// stores.Unreachable for the backend-unavailable scenarios.
// Per-scenario lines go to log (with timings, for the operator), never
// into the matrix.
func runConformance(ctx context.Context, target *conformance.Target, scenarios []conformance.Scenario, daemon fakehost.Daemon, stores conformance.Options, log io.Writer) (*Conformance, error) {
	rep := conformance.RunAll(ctx, target, scenarios, conformance.Options{
		Timeout: scenarioTimeout, Out: log, Daemon: daemon, Isolate: stores.Isolate, Unreachable: stores.Unreachable,
	})
	if log != nil {
		fmt.Fprintln(log, rep.Summary())
	}
	c := &Conformance{Total: len(rep.Results), Passed: rep.Passed, Failed: rep.Failed, Skipped: rep.Skipped}
	for _, sc := range scenarios {
		if !slices.Contains(c.Suites, sc.Suite) {
			c.Suites = append(c.Suites, sc.Suite)
		}
	}
	for _, r := range rep.Results {
		switch r.Status {
		case conformance.Fail:
			c.FailedIDs = append(c.FailedIDs, r.ID)
		case conformance.Skip:
			c.SkippedIDs = append(c.SkippedIDs, ScenarioNote{ID: r.ID, Reason: r.Reason})
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("conformance run interrupted: %w", ctx.Err())
	}
	return c, nil
}
