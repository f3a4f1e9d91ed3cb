package subjectsqlite

import (
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance"
)

// harnessSlow are the generic scenarios that need the $harness/slow opt-in
// (a slow, cancellable test method), which a shipped plugin does not serve;
// they SKIP for every plugin without it.
var harnessSlow = map[string]bool{
	"generic/ping-while-busy":           true,
	"generic/cancel-request":            true,
	"generic/shutdown-drains-in-flight": true,
}

// The conformance runner's subject suite (the official testkit's five
// scenarios plus the project's shape checks) and the generic lifecycle and
// wire suite: every subject scenario must PASS, none skipped.
func TestConformance(t *testing.T) {
	ctx := ctxFor(t, 3*time.Minute)
	target, err := conformance.Prepare(ctx, binaries.Path(t, binary), "subject", schemas(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := conformance.RunAll(ctx, target, conformance.Scenarios("subject"), conformance.Options{})
	subjects := 0
	for _, r := range rep.Results {
		if strings.HasPrefix(r.ID, "subject/") {
			subjects++
		}
		if r.Status == conformance.Pass || (r.Status == conformance.Skip && harnessSlow[r.ID]) {
			continue
		}
		t.Errorf("%s: %s %s\nwire log:\n%s\nstderr:\n%s", r.ID, r.Status, r.Reason, r.WireLog, r.Stderr)
	}
	if subjects < 5 {
		t.Errorf("only %d subject scenarios ran; the suite has at least the testkit's five", subjects)
	}
	t.Log(rep.Summary())
}
