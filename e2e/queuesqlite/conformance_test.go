package queuesqlite

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// TestConformance runs the generic suite and the queue suite against the
// built binary, as `animus-plugin-conformance --kind queue` will once the
// queue suite is registered.
func TestConformance(t *testing.T) {
	schemas, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	target, err := conformance.Prepare(ctx, binaries.Path(t, binaryName), "queue", schemas, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep := conformance.RunAll(ctx, target, append(conformance.Generic(), conformance.QueueSuite()...),
		conformance.Options{Out: &out, Verbose: true})
	t.Log("\n" + out.String())
	t.Log(rep.Summary())
	if rep.Failed > 0 {
		t.Fatalf("%d scenario(s) failed", rep.Failed)
	}
	queue := 0
	for _, r := range rep.Results {
		if len(r.ID) > 6 && r.ID[:6] == "queue/" {
			queue++
			if r.Status != conformance.Pass {
				t.Errorf("%s: %s %s", r.ID, r.Status, r.Reason)
			}
		}
	}
	if queue != len(conformance.QueueSuite()) {
		t.Errorf("ran %d queue scenarios, the suite has %d", queue, len(conformance.QueueSuite()))
	}
}
