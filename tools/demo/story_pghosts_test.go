package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// TestPgHosts runs the scene "two hosts, one queue" against the built
// animus-queue-postgres in a fresh namespace of the cluster
// scripts/postgres.sh runs (skipped without one, failed under CI=true),
// and checks the shared queue's answers: every entry handed out exactly
// once across the two daemons, the replayed key answered with the same
// entry, every completion applied and the queue empty at the end.
func TestPgHosts(t *testing.T) {
	dsn := pgtest.DSN(t)
	ns := pgtest.Schema(t, dsn)
	binDir := filepath.Dir(binaries.Path(t, PgHostsBinary))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	res, err := RunPgHosts(ctx, binDir, &out, PgHostsOptions{DSN: dsn, Namespace: ns})
	defer func() {
		if t.Failed() {
			t.Logf("narration:\n%s", out.String())
			if res != nil {
				for _, w := range res.Wire {
					t.Logf("wire log %s", w)
				}
			}
		}
	}()
	if err != nil {
		t.Fatalf("scene failed: %v", err)
	}

	if res.Namespace != ns {
		t.Errorf("namespace %q, want the test's %q", res.Namespace, ns)
	}
	if a, b := res.Projects["host-a"], res.Projects["host-b"]; a == "" || b == "" || a == b {
		t.Errorf("project roots %q and %q: want two different ones", a, b)
	}
	if a, b := res.Owners["host-a"], res.Owners["host-b"]; a == "" || b == "" || a == b {
		t.Errorf("owner ids %q and %q: want two different ones", a, b)
	}
	if res.Gate == "" {
		t.Error("no queue/v2 call passed the 0.7 gate")
	}

	// Three new entries, and the replay returned the keyed one.
	enqueued := map[string]bool{}
	for _, e := range res.Enqueued {
		if !e.Enqueued || e.Host != "host-a" || e.EntryID == "" {
			t.Errorf("enqueue %+v: want a new entry from host-a", e)
		}
		enqueued[e.EntryID] = true
	}
	if len(res.Enqueued) != 3 || len(enqueued) != 3 {
		t.Fatalf("enqueued %+v: want three distinct entries", res.Enqueued)
	}
	keyed := res.Enqueued[1]
	if r := res.Replay; r.Host != "host-b" || r.Enqueued || r.EntryID != keyed.EntryID || r.SubjectID != keyed.SubjectID || r.Key != keyed.Key || r.Key == "" {
		t.Errorf("replay %+v: want enqueued:false with host-a's keyed entry %+v", r, keyed)
	}

	// Every entry handed out exactly once, to the host that asked.
	handed := map[string]int{}
	byHost := map[string]int{}
	for _, l := range res.Leases {
		handed[l.EntryID]++
		byHost[l.Host]++
		if l.Owner != res.Owners[l.Host] || l.Generation == 0 || l.WorkflowID == "" {
			t.Errorf("lease %+v: want %s's owner id %s, a lease generation and a workflow id", l, l.Host, res.Owners[l.Host])
		}
	}
	for id := range enqueued {
		if handed[id] != 1 {
			t.Errorf("entry %s handed out %d times, want exactly once (leases %+v)", id, handed[id], res.Leases)
		}
	}
	if len(res.Leases) != 3 || byHost["host-b"] != 2 || byHost["host-a"] != 1 {
		t.Errorf("leases %+v: want two to host-b, then one to host-a", res.Leases)
	}

	// host-a sees the whole shared queue assigned.
	if st := res.StatsMid; st.Assigned != 3 || st.Pending != 0 || st.Total != 3 {
		t.Errorf("host-a's stats after both leases: %s, want 3 assigned", st)
	}
	if len(res.ListedAssigned) != 3 {
		t.Errorf("host-a's list: %v, want the three entries", res.ListedAssigned)
	}
	for id := range enqueued {
		if res.ListedAssigned[id] != "assigned" {
			t.Errorf("host-a's list: entry %s is %q, want assigned", id, res.ListedAssigned[id])
		}
	}

	// Everything completed; the queue is empty.
	if len(res.Completions) != 3 {
		t.Errorf("completions %v, want three", res.Completions)
	}
	for _, c := range res.Completions {
		if c != "applied" {
			t.Errorf("completions %v, want applied each", res.Completions)
			break
		}
	}
	if res.Final != (PgHostsStats{}) {
		t.Errorf("host-b's final stats: %s, want all zero", res.Final)
	}
	if res.Calls < 10 {
		t.Errorf("%d queue calls, want one process per call for every step", res.Calls)
	}
	if strings.Contains(out.String(), "✗") {
		t.Error("the narration reports a failed expectation")
	}
	for _, p := range res.Projects {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("project root %s left behind", p)
		}
	}
}

// TestPgHostsSkipped: without PostgreSQL the demo says so in one line and
// runs nothing else for the scene.
func TestPgHostsSkipped(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), t.TempDir(), &out, Options{PgHosts: true}); err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(out.String())
	if strings.Count(got, "\n") != 0 || !strings.Contains(got, "skipped") || !strings.Contains(got, EnvPgDSN) {
		t.Errorf("skip notice %q: want one line saying why", got)
	}
}
