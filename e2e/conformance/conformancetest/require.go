package conformancetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// RequireAllPass runs every scenario that applies to binary (the generic
// suite, its kind's suite and its own suite: conformance.ScenariosFor, so
// a suite missing from the registry shows up here) and fails t on any
// FAIL and on any SKIP: every pluginkit binary serves the busy scenarios'
// harness/slow under pluginkit.HarnessEnv, so nothing needs skipping. env overlays
// the daemon's environment (a fake upstream's URL and tokens). The report
// is logged, with wire logs of failing scenarios, and returned.
func RequireAllPass(t testing.TB, binary string, env map[string]string) conformance.Report {
	t.Helper()
	return RequireAllPassUnder(t, fakehost.Daemon{}, binary, env)
}

// RequireAllPassEveryDaemon is RequireAllPass once under each daemon line
// (fakehost.Daemons: 0.6, then 0.7), each in a subtest named after the
// line, since every plugin must keep working when an operator moves from
// one to the other. It returns the reports in that order.
func RequireAllPassEveryDaemon(t *testing.T, binary string, env map[string]string) []conformance.Report {
	t.Helper()
	return RequireAllPassEveryDaemonIsolated(t, binary, env, nil)
}

// RequireAllPassEveryDaemonIsolated is RequireAllPassEveryDaemon for a
// plugin whose store is not keyed by the project root (a database
// namespace): isolate (conformance.Options.Isolate) gives every scenario,
// and every further project a scenario makes, a fresh store, as a fresh
// project root does for a file-backed plugin. env holds what every
// process needs whatever its store (the database's address); it is also
// the environment of the manifest probe and the preliminary handshake. A
// nil isolate is RequireAllPassEveryDaemon.
func RequireAllPassEveryDaemonIsolated(t *testing.T, binary string, env map[string]string, isolate conformance.IsolateFunc) []conformance.Report {
	t.Helper()
	return RequireAllPassEveryDaemonWith(t, binary, env, conformance.Options{Isolate: isolate})
}

// RequireAllPassEveryDaemonWith is RequireAllPassEveryDaemon with o's
// store hooks (Isolate, Unreachable); o.Daemon is set per line.
func RequireAllPassEveryDaemonWith(t *testing.T, binary string, env map[string]string, o conformance.Options) []conformance.Report {
	t.Helper()
	var reps []conformance.Report
	for _, daemon := range fakehost.Daemons() {
		t.Run("daemon-"+daemon.String(), func(t *testing.T) {
			o := o
			o.Daemon = daemon
			reps = append(reps, requireAllPass(t, binary, env, o))
		})
	}
	return reps
}

// RequireAllPassUnder is RequireAllPass with every scenario's processes
// spawned under daemon's handshakes (conformance.Options.Daemon).
func RequireAllPassUnder(t testing.TB, daemon fakehost.Daemon, binary string, env map[string]string) conformance.Report {
	t.Helper()
	return requireAllPass(t, binary, env, conformance.Options{Daemon: daemon})
}

func requireAllPass(t testing.TB, binary string, env map[string]string, o conformance.Options) conformance.Report {
	t.Helper()
	var kind string
	rep := run(t, binary, "", env, 3*time.Minute, func(target *conformance.Target) []conformance.Scenario {
		kind = target.Kind
		return conformance.ScenariosFor(target)
	}, o)
	own := 0
	for _, r := range rep.Results {
		if !strings.HasPrefix(r.ID, "generic/") {
			own++
		}
	}
	if own == 0 {
		t.Errorf("no %s scenario ran: register the kind's suite in e2e/conformance/suites.go", kind)
	}
	return rep
}

// RequireSuitePass runs one suite's scenarios (and nothing else) against
// binary, selected by kind as `animus-plugin-conformance --kind` would,
// and fails t on any FAIL or SKIP. It exists for suites the runner adds
// only when a plugin earns them (queue-v2 needs the 0.7 gate), so a test
// can demand the suite whatever the plugin advertises.
func RequireSuitePass(t testing.TB, binary, kind string, scenarios []conformance.Scenario, env map[string]string) conformance.Report {
	t.Helper()
	rep := run(t, binary, kind, env, 5*time.Minute, func(*conformance.Target) []conformance.Scenario { return scenarios },
		conformance.Options{Timeout: time.Minute})
	if len(rep.Results) != len(scenarios) {
		t.Errorf("%d of %d %s scenarios ran", len(rep.Results), len(scenarios), kind)
	}
	return rep
}

// run prepares binary as kind ("" = its manifest's), runs the scenarios
// pick chooses for the target within budget, logs the report with the
// wire logs of failing scenarios, and fails t on every FAIL and SKIP.
func run(t testing.TB, binary, kind string, env map[string]string, budget time.Duration,
	pick func(*conformance.Target) []conformance.Scenario, o conformance.Options) conformance.Report {
	t.Helper()
	schemas, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	target, err := conformance.Prepare(ctx, binary, kind, schemas, env)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	o.Out, o.Verbose = &out, true
	rep := conformance.RunAll(ctx, target, pick(target), o)
	t.Logf("\n%s%s", out.String(), rep.Summary())
	for _, r := range rep.Results {
		switch r.Status {
		case conformance.Fail:
			t.Errorf("%s failed: %s", r.ID, r.Reason)
		case conformance.Skip:
			t.Errorf("%s skipped: %s", r.ID, r.Reason)
		}
	}
	return rep
}
