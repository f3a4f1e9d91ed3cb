package notifierwebhook

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

// TestSuiteCatchesDefects runs the notifier suites against a reference-like
// fixture (testdata/refnotifier), so each scenario is shown to fail when
// its promise is broken. The kind suite is fair to the reference: it
// passes, except the signature scenario, which skips for an unsigned
// plugin. This plugin's own suite fails it, scenario by scenario. In
// broken mode (400s retried, no loop guard) those two kind scenarios fail.
func TestSuiteCatchesDefects(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "refnotifier")
	build := exec.Command("go", "build", "-o", bin, "./testdata/refnotifier")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fixture: %v\n%s", err, out)
	}
	cases := []struct {
		name string
		env  map[string]string
		want map[string]conformance.Status // scenarios not listed must PASS
	}{
		{"reference-like", nil, map[string]conformance.Status{
			"notifier/standard-webhooks-signature": conformance.Skip,
			"notifier-webhook/idempotency-headers": conformance.Fail,
			"notifier-webhook/retry-after-429":     conformance.Fail,
			"notifier-webhook/renotify-sends-once": conformance.Fail,
		}},
		{"broken", map[string]string{"REFNOTIFIER_BROKEN": "1"}, map[string]conformance.Status{
			"notifier/standard-webhooks-signature": conformance.Skip,
			"notifier/permanent-400-dead-lettered": conformance.Fail,
			"notifier/loop-guard":                  conformance.Fail,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			target, err := conformance.Prepare(ctx, bin, "notifier", e2etest.Schemas(t), c.env)
			if err != nil {
				t.Fatal(err)
			}
			scenarios := conformance.NotifierSuite()
			if c.name == "reference-like" {
				scenarios = append(scenarios, conformance.NotifierWebhookSuite()...)
			}
			rep := conformance.RunAll(ctx, target, scenarios, conformance.Options{})
			for _, r := range rep.Results {
				want, ok := c.want[r.ID]
				if !ok {
					want = conformance.Pass
				}
				if r.Status != want {
					t.Errorf("%s: %s %q, want %s", r.ID, r.Status, r.Reason, want)
				} else if r.Status == conformance.Fail && strings.TrimSpace(r.Reason) == "" {
					t.Errorf("%s fails without saying why", r.ID)
				}
			}
		})
	}
}
