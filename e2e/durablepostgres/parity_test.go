package durablepostgres

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgdurable"
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
	s := pgdurable.New(t)
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
			got := run(postgres, s.Map(nil), isolate(t, s))
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
				wf, gf := normalise(pluginFrames(w.WireLog)), normalise(pluginFrames(g.WireLog))
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

// pluginFrames keeps, from a scenario's wire log (conformance.Result), the
// process headers without their pids and the frames the plugin sent
// without their timestamps.
func pluginFrames(wire string) []string {
	var out []string
	for _, line := range strings.Split(wire, "\n") {
		if head, ok := strings.CutPrefix(line, "--- process "); ok {
			n, _, _ := strings.Cut(head, " ")
			out = append(out, "--- process "+n)
			continue
		}
		if _, frame, ok := strings.Cut(line, " << "); ok {
			out = append(out, frame)
		}
	}
	return out
}

// The normalisation, in order. Identifiers minted at run time become
// numbered placeholders by first appearance in the scenario, so that two
// frames naming the same step still do after it; everything else that
// differs between two runs of one binary becomes a fixed placeholder.
var (
	reUUID = regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)
	reULID = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
	// durablekit's step ids: step_ and 128 random bits in hex.
	reStep = regexp.MustCompile(`\bstep_[0-9a-f]{32}\b`)
	reTime = regexp.MustCompile(`\b[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?`)
	// health/check's process figures.
	reHealth = regexp.MustCompile(`"(uptime_ms|memory_usage_bytes)":[0-9]+`)
	// The plugin's identity: its name wherever it appears, its description.
	rePluginName = regexp.MustCompile(`animus-durable-(sqlite|postgres)\b`)
	reDesc       = regexp.MustCompile(`("plugin_info":\{[^{}]*"description":)"(?:[^"\\]|\\.)*"`)
)

// normalise rewrites one run's frames: UUIDs → <UUID-n>, ULIDs → <ULID-n>,
// step ids → <STEP-n> (each numbered by first appearance), RFC 3339 timestamps → <TIME>,
// health/check's uptime_ms and memory_usage_bytes → <N>, the plugin's
// name → <PLUGIN> and plugin_info.description → <DESCRIPTION>. Pids and
// wire-log timestamps are already gone (pluginFrames). Epochs are kept:
// each scenario starts from an empty store on both binaries, so they must
// count alike.
func normalise(frames []string) string {
	seen := map[string]string{}
	count := map[string]int{}
	number := func(kind string) func(string) string {
		return func(s string) string {
			if p, ok := seen[s]; ok {
				return p
			}
			count[kind]++
			p := fmt.Sprintf("<%s-%d>", kind, count[kind])
			seen[s] = p
			return p
		}
	}
	var b strings.Builder
	for _, f := range frames {
		f = reUUID.ReplaceAllStringFunc(f, number("UUID"))
		f = reULID.ReplaceAllStringFunc(f, number("ULID"))
		f = reStep.ReplaceAllStringFunc(f, number("STEP"))
		f = reTime.ReplaceAllString(f, "<TIME>")
		f = reHealth.ReplaceAllString(f, `"$1":<N>`)
		f = rePluginName.ReplaceAllString(f, "<PLUGIN>")
		f = reDesc.ReplaceAllString(f, `${1}"<DESCRIPTION>"`)
		b.WriteString(f)
		b.WriteByte('\n')
	}
	return b.String()
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
	if got := normalise(pluginFrames(wire)); got != want {
		t.Errorf("normalise:\n%s\nwant:\n%s", got, want)
	}
}
