package durablepostgres

import (
	"context"
	"regexp"
	"sort"
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

// excluded are the durable scenarios parity leaves out, with the reason.
// They still run (and must pass, or for the first one are reported) in
// TestConformance; parity compares every other durable scenario.
var excluded = map[string]string{
	// Which of three concurrent processes gets "new" for a key, and so which
	// process's frames carry which answer, is the OS scheduler's choice.
	"durable/concurrent-begin-one-new": "three concurrent processes race begin_step on the same keys",
	// The store is broken differently on each backend (a file where
	// .animus should be; a database nobody answers at), so the -32304
	// answers differ in data.retryable by design: a file that cannot be
	// created stays so, a database may come back. Both pass TestConformance.
	"durable/backend-unavailable-32304": "the store is made unreachable in a different way on each backend",
}

// TestParity runs the durable conformance scenarios against
// animus-durable-sqlite (a fresh project root each) and
// animus-durable-postgres (a fresh schema each), under each daemon line,
// and requires, scenario by scenario, the same verdict and the same
// plugin→host frames, process by process, after normalise. Both binaries
// run pkg/durablekit over different stores, so they must say the same
// thing in the same words.
func TestParity(t *testing.T) {
	s := pgns.Durable.New(t)
	sqlite, postgres := binaries.Path(t, sqliteName), binaries.Path(t, binaryName)
	schemas, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	var scenarios []conformance.Scenario
	for _, sc := range conformance.DurableSuite() {
		if _, skip := excluded[sc.ID()]; !skip {
			scenarios = append(scenarios, sc)
		}
	}
	for _, daemon := range fakehost.Daemons() {
		t.Run("daemon-"+daemon.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			run := func(binary string, env map[string]string, isolate conformance.IsolateFunc) map[string]conformance.Result {
				target, err := conformance.Prepare(ctx, binary, "durable", schemas, env)
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
			got := run(postgres, s.Map(nil), s.Isolated(t))
			same := 0
			for _, sc := range scenarios {
				id := sc.ID()
				w, g := want[id], got[id]
				if w.Status != g.Status {
					t.Errorf("%s: %s %s (%s), %s %s (%s)\n--- %s wire log ---\n%s", id, sqliteName, w.Status, w.Reason,
						binaryName, g.Status, g.Reason, binaryName, g.WireLog)
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
			t.Logf("%d of %d durable scenarios (%d left out: %v) answered frame for frame alike",
				same, len(scenarios), len(excluded), keys(excluded))
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// normaliser is the durable store's parity normalisation
// (parity.Normaliser): besides the shared rewrites, step ids → <STEP-n>.
// Epochs are kept: each scenario starts from an empty store on both
// binaries, so they must count alike.
var normaliser = parity.Normaliser{
	Name: regexp.MustCompile(`animus-durable-(sqlite|postgres)\b`),
	// durablekit's step ids: step_ and 128 random bits in hex.
	Minted: []parity.Minted{{Re: regexp.MustCompile(`\bstep_[0-9a-f]{32}\b`), Kind: parity.Always("STEP")}},
}

// TestNormalise pins the parity normalisation: minted ids numbered by
// first appearance (the same id keeps its number), times and health
// figures masked, the plugin's identity masked, everything else kept.
func TestNormalise(t *testing.T) {
	wire := "--- process 1 (pid 4242)\n" +
		`12:00:00.000001 >> {"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n" +
		`12:00:00.000002 << {"result":{"plugin_info":{"name":"animus-durable-postgres","version":"v1","plugin_kind":"durable_store","description":"PostgreSQL \"durable\""}}}` + "\n" +
		`12:00:00.000003 << {"id":"0190c2a4-1b2c-7d3e-8f40-123456789abc","other":"0190c2a4-1b2c-7d3e-8f40-cba987654321","again":"0190c2a4-1b2c-7d3e-8f40-123456789abc"}` + "\n" +
		`12:00:00.000004 << {"step_id":"step_4efdefcda6d07566d203c9905d98d20c","other":"step_e0fd7b185e68e6ce4ac08e237a1c990e","again":"step_4efdefcda6d07566d203c9905d98d20c"}` + "\n" +
		`12:00:00.000004 << {"reservation_expires_at":"2026-12-03T11:04:20.123456Z","uptime_ms":17,"epoch":2}` + "\n" +
		"--- process 2 (pid 4243)\n"
	want := "--- process 1\n" +
		`{"result":{"plugin_info":{"name":"<PLUGIN>","version":"v1","plugin_kind":"durable_store","description":"<DESCRIPTION>"}}}` + "\n" +
		`{"id":"<UUID-1>","other":"<UUID-2>","again":"<UUID-1>"}` + "\n" +
		`{"step_id":"<STEP-1>","other":"<STEP-2>","again":"<STEP-1>"}` + "\n" +
		`{"reservation_expires_at":"<TIME>","uptime_ms":<N>,"epoch":2}` + "\n" +
		"--- process 2\n"
	if got := normaliser.Normalise(parity.PluginFrames(wire)); got != want {
		t.Errorf("normalise:\n%s\nwant:\n%s", got, want)
	}
}
