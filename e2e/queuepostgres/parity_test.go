package queuepostgres

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/parity"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
	script "github.com/animus-plugins/animus-plugins/pkg/golden"
)

// nondeterministic are the queue-v2 scenarios whose frames depend on how
// the OS schedules processes, not on the queue: which of several
// concurrent processes wins a lease or a subject, in which order they are
// spawned, whether a SIGKILL lands before or after the reply. They still
// run (and must pass) against both binaries in TestConformance; parity
// compares the rest, which is every other queue and queue-v2 scenario.
var nondeterministic = map[string]string{
	"queue-v2/21b-list-paging":                 "four concurrent processes enqueue the 501 entries",
	"queue-v2/22-concurrent-lease-processes":   "concurrent processes race for the entries",
	"queue-v2/23-concurrent-enqueue-processes": "concurrent processes race for the subject",
	"queue-v2/24-races":                        "concurrent renew/recover/completion race",
	"queue-v2/25-sigkill-mid-call":             "whether each kill lands before the reply is timing",
}

// TestParity runs the 0.3.2 queue and queue-v2 conformance scenarios
// against animus-queue-sqlite (a fresh project root each) and
// animus-queue-postgres (a fresh schema each), under each daemon line,
// and requires, scenario by scenario, the same verdict and the same
// plugin→host frames, process by process, after normalise. Both binaries
// run pkg/queuekit/queue over different stores, so they must say the same
// thing in the same words.
func TestParity(t *testing.T) {
	q := pgns.Queue.New(t)
	sqlite, postgres := binaries.Path(t, sqliteName), binaries.Path(t, binaryName)
	schemas, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	var scenarios []conformance.Scenario
	for _, sc := range append(conformance.QueueSuite(), conformance.QueueV2Suite()...) {
		if _, skip := nondeterministic[sc.ID()]; !skip {
			scenarios = append(scenarios, sc)
		}
	}
	for _, daemon := range fakehost.Daemons() {
		t.Run("daemon-"+daemon.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			run := func(binary string, env map[string]string, isolate conformance.IsolateFunc) map[string]conformance.Result {
				target, err := conformance.Prepare(ctx, binary, "queue", schemas, env)
				if err != nil {
					t.Fatalf("%s: %v", binary, err)
				}
				rep := conformance.RunAll(ctx, target, scenarios, conformance.Options{
					Daemon: daemon, Isolate: isolate, KeepWire: true, Timeout: time.Minute})
				t.Log(rep.Summary())
				out := map[string]conformance.Result{}
				for _, r := range rep.Results {
					out[r.ID] = r
				}
				return out
			}
			want := run(sqlite, nil, nil)
			got := run(postgres, q.Map(nil), q.Isolated(t))
			same := 0
			for _, sc := range scenarios {
				id := sc.ID()
				w, g := want[id], got[id]
				if w.Status != g.Status {
					t.Errorf("%s: %s %s (%s), %s %s (%s)", id, sqliteName, w.Status, w.Reason, binaryName, g.Status, g.Reason)
					continue
				}
				if w.Status != conformance.Pass {
					t.Errorf("%s: %s on both binaries: %s | %s", id, w.Status, w.Reason, g.Reason)
					continue
				}
				wf, gf := normaliser.Normalise(parity.PluginFrames(w.WireLog)), normaliser.Normalise(parity.PluginFrames(g.WireLog))
				if !strings.Contains(wf, `"jsonrpc"`) {
					t.Errorf("%s: no plugin frame recorded for %s", id, sqliteName)
					continue
				}
				if wf != gf {
					t.Errorf("%s: the plugins' frames differ after normalisation (-%s +%s):\n%s",
						id, sqliteName, binaryName, script.LineDiff(wf, gf))
					continue
				}
				same++
			}
			t.Logf("%d of %d scenarios (%d left out as nondeterministic) answered frame for frame alike",
				same, len(scenarios), len(nondeterministic))
		})
	}
}

// normaliser is the queue's parity normalisation (parity.Normaliser):
// besides the shared rewrites, the harness's owner-/wf-/daemon-<counter>
// ids → <owner-n> …
var normaliser = parity.Normaliser{
	Name: regexp.MustCompile(`animus-queue-(sqlite|postgres)\b`),
	// The conformance harness's own owner/workflow ids (uniq): a
	// process-wide counter, so the second run's numbers are higher.
	Minted: []parity.Minted{{Re: regexp.MustCompile(`\b(owner|wf|daemon)-[0-9]+\b`), Kind: func(s string) string {
		kind, _, _ := strings.Cut(s, "-")
		return kind
	}}},
}

// TestNormalise pins the parity normalisation: minted ids numbered by
// first appearance (the same id keeps its number), times and health
// figures masked, the plugin's identity masked, everything else kept.
func TestNormalise(t *testing.T) {
	wire := "--- process 1 (pid 4242)\n" +
		`12:00:00.000001 >> {"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n" +
		`12:00:00.000002 << {"result":{"plugin_info":{"name":"animus-queue-postgres","version":"v1","plugin_kind":"queue","description":"PostgreSQL \"queue\""}}}` + "\n" +
		`12:00:00.000003 << {"entry_id":"0190c2a4-1b2c-7d3e-8f40-123456789abc","other":"0190c2a4-1b2c-7d3e-8f40-cba987654321","again":"0190c2a4-1b2c-7d3e-8f40-123456789abc"}` + "\n" +
		`12:00:00.000004 << {"owner_id":"owner-917","workflow_id":"wf-12","at":"2026-12-03T11:04:20.123456Z","uptime_ms":17,"generation":2}` + "\n" +
		"--- process 2 (pid 4243)\n"
	want := `{"result":{"plugin_info":{"name":"<PLUGIN>","version":"v1","plugin_kind":"queue","description":"<DESCRIPTION>"}}}` + "\n" +
		`{"entry_id":"<UUID-1>","other":"<UUID-2>","again":"<UUID-1>"}` + "\n" +
		`{"owner_id":"<owner-1>","workflow_id":"<wf-1>","at":"<TIME>","uptime_ms":<N>,"generation":2}` + "\n"
	got := normaliser.Normalise(parity.PluginFrames(wire))
	want = "--- process 1\n" + want + "--- process 2\n"
	if got != want {
		t.Errorf("normalise:\n%s\nwant:\n%s", got, want)
	}
}
