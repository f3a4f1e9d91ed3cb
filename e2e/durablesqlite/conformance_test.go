package durablesqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// TestConformance runs the generic scenarios and DurableSuite against the
// binary. Every scenario must pass, except generic ones that need the
// $harness/slow opt-in, which a production binary does not carry; their
// skip reason is checked so no other skip goes unnoticed.
func TestConformance(t *testing.T) {
	schemas, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	target, err := conformance.Prepare(ctx, binaries.Path(t, "animus-durable-sqlite"), "durable", schemas, nil)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	rep := conformance.RunAll(ctx, target, append(conformance.Generic(), conformance.DurableSuite()...),
		conformance.Options{Out: &log, Verbose: true})
	t.Logf("\n%s%s", log.String(), rep.Summary())
	durable := 0
	for _, r := range rep.Results {
		if strings.HasPrefix(r.ID, "durable/") {
			durable++
		}
		switch {
		case r.Status == conformance.Fail:
			t.Errorf("%s: %s", r.ID, r.Reason)
		case r.Status == conformance.Skip && !strings.Contains(r.Reason, conformance.HarnessSlow):
			t.Errorf("%s skipped: %s", r.ID, r.Reason)
		}
	}
	if want := len(conformance.DurableSuite()); durable != want {
		t.Errorf("%d durable scenarios ran, want %d", durable, want)
	}
}
