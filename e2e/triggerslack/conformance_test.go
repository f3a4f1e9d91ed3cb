package triggerslack

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/conformance/conformancetest"
	"github.com/animus-plugins/animus-plugins/e2e/fakeslack"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// TestConformance runs the generic suite, the trigger kind suite (the port
// of the official testkit's) and TriggerSlackSuite against the binary,
// with a fake Slack that has an event waiting for every new connection:
// watch-fires-event must see it in the flat shape within 3 s. It runs
// once under each daemon line (0.7's generic host announces 1.2.0).
func TestConformance(t *testing.T) {
	t.Parallel()
	fake := fakeslack.New(t, fakeslack.Options{
		Greeting: [][]byte{fakeslack.EventsAPI("env-greeting", 0, fakeslack.Callback("T0FAKE", "EvGreeting",
			fakeslack.Mention("C1", "U1", "<@U0BOT> conformance", "1715701234.999999")))},
	})
	conformancetest.RequireAllPassEveryDaemon(t, binaries.Path(t, binary), socketEnv(fake, nil))
}

// TestConformanceWithoutTokens: the official suite's verdicts when no
// Slack is configured: watch fails with a keyword the testkit classifies
// as missing configuration, so watch-fires-event is a SKIP, not a FAIL; the
// Slack checks that need no network still pass.
func TestConformanceWithoutTokens(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"SLACK_APP_TOKEN", "SLACK_BOT_TOKEN", "SLACK_TRIGGER_ID"} {
		if os.Getenv(k) != "" {
			t.Skipf("%s is set in the test environment; the testkit inherits it", k)
		}
	}
	ctx := e2etest.Ctx(t, time.Minute)
	target, err := conformance.Prepare(ctx, binaries.Path(t, binary), "trigger", e2etest.Schemas(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var kind []conformance.Scenario
	for _, sc := range append(conformance.Scenarios("trigger"), conformance.TriggerSlackSuite()...) {
		if sc.Suite != "generic" {
			kind = append(kind, sc)
		}
	}
	rep := conformance.RunAll(ctx, target, kind, conformance.Options{})
	want := map[string]struct {
		status conformance.Status
		reason string
	}{
		"trigger/watch-fires-event":       {conformance.Skip, "requires external configuration: backend unavailable: SLACK_APP_TOKEN unset (code -32603)"},
		"trigger/event-payload-shape":     {conformance.Skip, "no event captured"},
		"trigger-slack/watch-stream-exit": {conformance.Skip, "SLACK_APP_TOKEN unset"},
	}
	for _, r := range rep.Results {
		w, listed := want[r.ID]
		if !listed {
			w.status = conformance.Pass
		}
		if r.Status != w.status || !strings.Contains(r.Reason, w.reason) {
			t.Errorf("%s: %s %q, want %s containing %q\nwire log:\n%s", r.ID, r.Status, r.Reason, w.status, w.reason, r.WireLog)
		}
	}
}
