package conformancetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
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
	schemas, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	target, err := conformance.Prepare(ctx, binary, "", schemas, env)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep := conformance.RunAll(ctx, target, conformance.ScenariosFor(target), conformance.Options{Out: &out, Verbose: true})
	t.Logf("\n%s%s", out.String(), rep.Summary())
	own := 0
	for _, r := range rep.Results {
		if !strings.HasPrefix(r.ID, "generic/") {
			own++
		}
		switch {
		case r.Status == conformance.Fail:
			t.Errorf("%s failed: %s", r.ID, r.Reason)
		case r.Status == conformance.Skip:
			t.Errorf("%s skipped: %s", r.ID, r.Reason)
		}
	}
	if own == 0 {
		t.Errorf("no %s scenario ran: register the kind's suite in e2e/conformance/suites.go", target.Kind)
	}
	return rep
}
