package notifierwebhook

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
)

// harnessSlow are the generic scenarios a plugin without $harness/slow
// skips; this plugin has no slow test method to offer.
var harnessSlow = map[string]bool{
	"generic/ping-while-busy":           true,
	"generic/cancel-request":            true,
	"generic/shutdown-drains-in-flight": true,
}

// TestConformance runs the generic suite, the notifier kind suite and this
// plugin's own suite against the binary. Every notifier scenario must PASS
// (none may SKIP: this plugin signs), and every generic one except the
// opt-in slow-request trio, which TestBusyPluginStaysResponsive covers with
// a real slow notify instead.
func TestConformance(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	target, err := conformance.Prepare(ctx, binary(t), "notifier", schemas(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	own := append(conformance.NotifierSuite(), conformance.NotifierWebhookSuite()...)
	rep := conformance.RunAll(ctx, target, append(conformance.Generic(), own...), conformance.Options{Out: &out, Verbose: true})
	t.Logf("%s\n%s", out.String(), rep.Summary())
	notifier := 0
	for _, r := range rep.Results {
		if strings.HasPrefix(r.ID, "notifier") {
			notifier++
		}
		if r.Status == conformance.Pass || (r.Status == conformance.Skip && harnessSlow[r.ID]) {
			continue
		}
		t.Errorf("%s: %s %s", r.ID, r.Status, r.Reason)
	}
	if want := len(own); notifier != want {
		t.Errorf("%d notifier scenarios ran, want %d", notifier, want)
	}
}
