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
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// TestStory runs the end-to-end story against the built binaries once as
// each daemon line, as `make demo` does, and checks what each step
// produced, as the plugins answered it. As a 0.7 daemon the queue steps go
// through queue/v2 behind the daemon's gate: a queue that fails the gate
// or any v2 call fails the test. On failure it prints the narration and
// every process's full wire log.
func TestStory(t *testing.T) {
	binDir := storyBinDir(t)
	for _, daemon := range fakehost.Daemons() {
		t.Run("daemon-"+daemon.String(), func(t *testing.T) { testStoryAs(t, binDir, daemon) })
	}
}

func testStoryAs(t *testing.T, binDir string, daemon fakehost.Daemon) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	res, err := RunStory(ctx, binDir, &out, daemon)
	took := time.Since(start)
	defer func() {
		if t.Failed() {
			t.Logf("narration:\n%s", out.String())
			if res == nil {
				return
			}
			for _, w := range res.Wire {
				t.Logf("wire log %s", w)
			}
		}
	}()
	if err != nil {
		t.Fatalf("story as the %s daemon failed after %v: %v", daemon, took, err)
	}
	last := func(xs []string) []string { return xs[:max(0, len(xs)-1)] }
	for _, c := range []struct {
		step string
		ok   bool
		got  any
	}{
		{"1: the event carries Alice's text", res.EventText == storyMention, res.EventText},
		{"1: flat event for the configured trigger", res.TriggerID == storyTrigger && res.EventKind == "slack.mention", []string{res.TriggerID, res.EventKind}},
		{"1: event id is team/channel/ts", strings.HasPrefix(res.EventID, "slack:T0FAKE/"+storyChannel+"/"), res.EventID},
		{"2: one entry leased, the review's", len(res.Leased) == 1 && res.Leased[0].EntryID == res.EntryID && res.Leased[0].SubjectID == res.SubjectKey, res.Leased},
		{"2: leased under the daemon's workflow id", len(res.Leased) == 1 && res.Leased[0].WorkflowID == storyWorkflow, res.Leased},
		{"2: the excluded subject was not leased", res.OtherKey != "" && res.OtherKey != res.SubjectKey && !slices.ContainsFunc(res.Leased, func(l StoryLease) bool { return l.SubjectID == res.OtherKey }), res.OtherKey},
		{"3: first run reserves both steps", slices.Equal(res.FirstRun, []string{"new", "new"}), res.FirstRun},
		{"3: the store process died by SIGKILL", res.KilledBySignal, res.KilledBySignal},
		{"3: replay answers already_committed", slices.Equal(res.Replay, []string{"already_committed", "already_committed"}), res.Replay},
		{"3: replay serves the committed outputs", res.ReplayOutputsMatch, res.ReplayOutputsMatch},
		{"3: no second side effect at Slack", res.EffectsBefore == 2 && res.EffectsAfter == 2, []int{res.EffectsBefore, res.EffectsAfter}},
		{"3: epochs grow across the restart", res.Epoch2 > res.EpochBefore && res.EpochBefore > 0, []uint64{res.EpochBefore, res.Epoch2}},
		{"3: query_run lists both commits in order", slices.Equal(res.CommittedSteps, []string{"post-review", "dm-author"}), res.CommittedSteps},
		{"4: log lines were stored", len(res.LogsStored) >= 5, res.LogsStored},
		{"4: query reads back every line stored before it", len(res.LogsQueried) > 0 && slices.Equal(res.LogsQueried, last(res.LogsStored)), res.LogsQueried},
		{"4: they reached Loki", res.LokiEntries >= len(res.LogsQueried) && res.LokiEntries > 0, res.LokiEntries},
		{"4: tail replays them and follows the live one", slices.Equal(res.LogsTailed, res.LogsStored), res.LogsTailed},
		{"5: subject done", res.SubjectStatus == "done", res.SubjectStatus},
		{"5: queue entry completed once", completedOnce(res), []any{res.Completion, res.PendingAfter, res.AssignedAfter, res.V2.Retry}},
		{"5: one webhook, signature verified", res.Deliveries == 1 && res.SignatureOK, []any{res.Deliveries, res.SignatureOK}},
		{"5: the signature check can fail", res.WrongKeyRejected, res.WrongKeyRejected},
		{"5: the webhook is workflow_completed for the workflow", res.WebhookEventType == "workflow_completed" && res.WebhookWorkflow == storyWorkflow, []string{res.WebhookEventType, res.WebhookWorkflow}},
		{"6: REST queue stats match the queue plugin", res.RESTQueueStats["ready"] == res.PendingAfter && res.RESTQueueStats["done_recent"] == 1 && res.RESTQueueStats["in_flight"] == res.AssignedAfter, res.RESTQueueStats},
		{"6: REST subject and workflow status", res.RESTSubjectStatus == "done" && res.RESTWorkflowStatus == "completed", []string{res.RESTSubjectStatus, res.RESTWorkflowStatus}},
		{"6: SSE delivered every daemon event in order", len(res.Emitted) >= 10 && slices.Equal(res.SSE, res.Emitted), res.SSE},
		{"6: SSE carried workflow_completed", slices.Contains(res.SSE, "workflow_completed"), res.SSE},
		{"6: SSE ended with event: end on shutdown", res.SSEEnd, res.SSEEnd},
		{"6: REST and SSE went through the control socket", containsAll(res.DaemonCalls, "daemon/events", "queue/stats", "subject/get", "workflow/get"), res.DaemonCalls},
	} {
		if !c.ok {
			t.Errorf("step %s: got %v", c.step, c.got)
		}
	}
	for _, r := range res.Rows {
		if r.Result != "ok" || r.Did == "" {
			t.Errorf("summary row %s: %s %q", r.Plugin, r.Result, r.Did)
		}
	}
	if daemon == fakehost.Daemon07 {
		checkStoryV2(t, res)
	}
	if len(res.Rows) != 7 {
		t.Errorf("summary has %d rows, want one per plugin (7)", len(res.Rows))
	}
	if strings.Contains(out.String(), "✗") {
		t.Errorf("the narration reports a failed expectation")
	}
	t.Logf("story took %v", took)
}

// completedOnce: the review's entry finished exactly once, the line's
// way; what is left is the nightly subject's entry (a second, pending one
// under 0.3.2; the running, assigned one under v2).
func completedOnce(res *StoryResult) bool {
	if res.Daemon == fakehost.Daemon07.String() {
		return res.Completion == "applied" && res.V2.Retry == "already_applied" && res.PendingAfter == 0 && res.AssignedAfter == 1
	}
	return res.Completion == `{"changed":true,"not_found":false}` && res.PendingAfter == 1 && res.AssignedAfter == 0
}

// checkStoryV2 checks the 0.7 run's queue/v2 answers (queue-v2.md §3).
func checkStoryV2(t *testing.T, res *StoryResult) {
	t.Helper()
	v, f := res.V2, res.V2.Fence
	for _, c := range []struct {
		step string
		ok   bool
		got  any
	}{
		{"0.7: the gate passed", v.Gate != "", v.Gate},
		{"2: a re-sent idempotency key returns the entry", v.Replayed, v.Replayed},
		{"2: a live subject's enqueue returns its entry", v.LiveReturned, v.LiveReturned},
		{"2: the CLI's old-style list sees both entries", v.ListedAll == 2, v.ListedAll},
		{"2: the ticket names the review's subject and workflow", f.SubjectID == res.SubjectKey && f.WorkflowID == storyWorkflow && f.SubjectGeneration > 0 && f.WorkflowGeneration > 0, f},
		{"2: the ticket is the daemon's, first generation", strings.HasPrefix(f.Owner, "daemon-") && f.LeaseGeneration == 1 && !f.ExpiresAt.IsZero(), f},
		{"2: renew applied without shortening", v.Renewed == "applied" && v.RenewExtended, []any{v.Renewed, v.RenewExtended}},
	} {
		if !c.ok {
			t.Errorf("step %s: got %v", c.step, c.got)
		}
	}
}

// storyBinDir returns one directory holding all seven plugin binaries
// (built if missing): the story spawns them from one place, as the daemon
// runs them from one install directory.
func storyBinDir(t *testing.T) string {
	t.Helper()
	dir := ""
	paths := map[string]string{}
	for _, p := range storyPlugins {
		paths[p.binary] = binaries.Path(t, p.binary)
		if d := filepath.Dir(paths[p.binary]); dir == "" || d == dir {
			dir = d
			continue
		}
		dir = "mixed"
	}
	if dir != "mixed" {
		return dir
	}
	links := t.TempDir()
	for name, p := range paths {
		if err := os.Symlink(p, filepath.Join(links, name)); err != nil {
			t.Fatal(err)
		}
	}
	return links
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
