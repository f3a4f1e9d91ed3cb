package transporthttp

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance"
)

// The conformance runner's generic scenarios, the transport kind's suite
// (testkit ports) and TransportHTTPSuite all pass for the binary. Skips are
// listed in the log with their reasons (the generic busy scenarios need a
// $harness/slow method, which a transport does not have).
func TestConformance(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	target, err := conformance.Prepare(ctx, binaries.Path(t, binary), "transport", loadSchemas(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	scenarios := conformance.Scenarios("transport")
	seen := map[string]bool{}
	for _, sc := range scenarios {
		seen[sc.ID()] = true
	}
	for _, sc := range conformance.TransportHTTPSuite() {
		if !seen[sc.ID()] { // once the lead registers it, Scenarios already has it
			scenarios = append(scenarios, sc)
		}
	}
	var out bytes.Buffer
	rep := conformance.RunAll(ctx, target, scenarios, conformance.Options{Out: &out, Verbose: true})
	t.Logf("\n%s%s", out.String(), rep.Summary())
	for _, r := range rep.Results {
		if r.Status == conformance.Fail {
			t.Errorf("%s: %s", r.ID, r.Reason)
		}
	}
	if rep.Passed == 0 {
		t.Fatal("no scenario passed")
	}
}
