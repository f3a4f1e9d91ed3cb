package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// TestPgSubjects runs the scene "two hosts, one task list" against the
// built animus-subject-postgres in a fresh namespace of the cluster
// scripts/postgres.sh runs (skipped without one, failed under CI=true),
// and checks what host-b's watch saw and what both hosts list: every
// change from either machine on the watch, once, in commit order, with
// the right kind, and both hosts listing the same two tasks, each
// carrying the label the other machine added.
func TestPgSubjects(t *testing.T) {
	dsn := pgtest.DSN(t)
	ns := pgtest.Schema(t, dsn)
	binDir := filepath.Dir(binaries.Path(t, PgSubjectsBinary))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	res, err := RunPgSubjects(ctx, binDir, &out, PgHostsOptions{DSN: dsn, Namespace: ns})
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
	if a, b := res.Daemons["host-a"], res.Daemons["host-b"]; a == 0 || b == 0 || a == b {
		t.Errorf("daemon pids %d and %d: want one long-lived process per host", a, b)
	}
	if !res.Watching {
		t.Error("host-b's subject/watch was not acknowledged")
	}
	if len(res.Created) != 2 || res.Created[0].ID == res.Created[1].ID {
		t.Fatalf("created %v: want two distinct tasks", res.Created)
	}
	first, second := res.Created[0].ID, res.Created[1].ID
	for _, c := range res.Created {
		if !strings.HasPrefix(c.ID, "task:") || c.Status != "ready" {
			t.Errorf("created %s: want a ready task:<ULID>", c)
		}
	}

	// host-b's watch: exactly the four changes, in the order they were
	// committed, each attributed to the machine that made it.
	want := []struct{ kind, id, host, caller string }{
		{"created", first, "host-a", "CLI"},
		{"created", second, "host-a", "CLI"},
		{"status-changed", first, "host-a", "daemon"},
		{"updated", second, "host-b", "CLI"},
	}
	if len(res.Events) != len(want) {
		t.Fatalf("watch events %+v: want %d", res.Events, len(want))
	}
	for i, w := range want {
		e := res.Events[i]
		if e.Kind != w.kind || e.Subject.ID != w.id || e.Host != w.host || e.Caller != w.caller {
			t.Errorf("watch event %d: %s %s by %s's %s, want %s %s by %s's %s", i, e.Kind, e.Subject.ID, e.Host, e.Caller, w.kind, w.id, w.host, w.caller)
		}
	}
	if e := res.Events[2].Subject; e.Status != "in-progress" || e.Assignee == "" || !slices.Contains(e.Labels, PgSubjectsLabelA) {
		t.Errorf("status-changed event carries %s: want in-progress, an assignee and %s", e, PgSubjectsLabelA)
	}
	if e := res.Events[3].Subject; e.Status != "ready" || !slices.Contains(e.Labels, PgSubjectsLabelB) {
		t.Errorf("updated event carries %s: want ready with %s", e, PgSubjectsLabelB)
	}

	// Both hosts list the same two tasks, with both machines' labels.
	if len(res.ListedA) != 2 || !slices.EqualFunc(res.ListedA, res.ListedB, sameTask) {
		t.Fatalf("host-a lists %v, host-b lists %v: want the same two tasks", res.ListedA, res.ListedB)
	}
	byID := map[string]PgSubjectsTask{}
	for _, l := range res.ListedA {
		byID[l.ID] = l
	}
	if l := byID[first]; l.Status != "in-progress" || !slices.Contains(l.Labels, PgSubjectsLabelA) {
		t.Errorf("listed %s: want in-progress with host-a's label %s", l, PgSubjectsLabelA)
	}
	if l := byID[second]; l.Status != "ready" || !slices.Contains(l.Labels, PgSubjectsLabelB) {
		t.Errorf("listed %s: want ready with host-b's label %s", l, PgSubjectsLabelB)
	}

	if res.CLICalls != 4 {
		t.Errorf("%d CLI processes, want 4 (two creates, one update, one list)", res.CLICalls)
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

// TestPgSubjectsSkipped: without PostgreSQL the one skip line names this
// scene too.
func TestPgSubjectsSkipped(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), t.TempDir(), &out, Options{PgHosts: true}); err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(out.String())
	if strings.Count(got, "\n") != 0 || !strings.Contains(got, `"two hosts, one task list"`) || !strings.Contains(got, PgSubjectsBinary) {
		t.Errorf("skip notice %q: want one line naming the scene and its plugin", got)
	}
}
