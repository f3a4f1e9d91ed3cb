package compat

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// sampleMatrix is a matrix as Generate would build it for one measured
// queue plugin and one missing binary.
func sampleMatrix(version string) *Matrix {
	queue, loki := pluginByDir("queue-sqlite"), pluginByDir("logs-loki")
	init := &fakehost.InitializeResult{
		ProtocolVersion: "1.1.0",
		Capabilities:    fakehost.PluginCapabilities{Methods: []string{"queue/enqueue", "health/check", "queue/extra"}, Cancellation: true},
		KindCapabilities: map[string]fakehost.KindCapability{
			"queue": {CrateVersion: "0.3.2", Extra: json.RawMessage(`{"max_lease_batch":4294967295}`)},
		},
	}
	pr := &Probe{
		Manifest: &fakehost.Manifest{Name: queue.Name(), Version: version, PluginKind: "queue", ProtocolVersion: "1.1.0",
			EnvRequired: []fakehost.EnvRequirement{{Name: "ANIMUS_QUEUE_DB_PATH"}}},
		Init: init,
		Methods: []MethodResult{
			{SpecMethod: SpecMethod{Method: "queue/enqueue", Ref: "spec §7.6"}, Name: "queue/enqueue", Advertised: true},
			{SpecMethod: SpecMethod{Method: "$/ping", Ref: "spec §6.2"}, Name: "$/ping", Called: true, Answered: true},
			{SpecMethod: SpecMethod{Method: "queue/v2/lease", Ref: "queue.md §8"}, Name: "queue/v2/lease", Called: true, Code: -32601, Category: "method_not_found"},
		},
		Beyond: []string{"queue/extra"},
		Exit:   "daemon ladder: exited by itself with code 0",
	}
	runs := []LineRun{
		{Line: line06, Daemon: fakehost.Daemon06, Sent: "protocol `1.1.0`, host `animus 0.6.33`, `init_extensions` `project_binding`",
			Accepted: true, Reply: "protocol_version 1.1.0",
			Conformance: &Conformance{Suites: []string{"generic", "queue"}, Total: 4, Passed: 2, Failed: 1, Skipped: 1,
				FailedIDs: []string{"queue/lease"}, SkippedIDs: []ScenarioNote{{ID: "generic/cancel-request", Reason: "no $harness/slow"}}}},
		{Line: line07, Daemon: fakehost.Daemon07, Sent: "protocol `1.1.0`, host `animus 0.7.0-rc.52`, `init_extensions` `project_binding`",
			Accepted: true, Reply: "protocol_version 1.1.0", Gates: []GateResult{evaluate(Gates(line07, "queue")[0], init)},
			NotRun: "the daemon refuses to use the plugin (gate)"},
	}
	return &Matrix{
		Versions: map[string][]string{version: {queue.Binary()}},
		Rows: []Row{
			{Plugin: queue, Probe: pr, Runs: runs, Lines: DaemonLines(queue.Dir), Differences: DifferencesOf(queue.Dir)},
			{Plugin: loki, Missing: "bin/animus-logs-loki is not built (`make build`)", Lines: DaemonLines(loki.Dir), Differences: DifferencesOf(loki.Dir)},
		},
	}
}

// pluginByDir is the Plugins row of plugins/<dir> (the zero Plugin when
// there is none, which the content checks then report).
func pluginByDir(dir string) Plugin {
	for _, p := range Plugins() {
		if p.Dir == dir {
			return p
		}
	}
	return Plugin{}
}

func render(t *testing.T, m *Matrix) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRenderContent(t *testing.T) {
	doc := render(t, sampleMatrix("v1.2.3-4-gabcdef0"))
	if !strings.HasPrefix(doc, Header+"\n") {
		t.Errorf("document does not start with the generated header:\n%.200s", doc)
	}
	for _, want := range []string{
		VersionPrefix + "`v1.2.3-4-gabcdef0`\n",
		"| `queue/v2/lease` | queue.md §8 | refused: `-32601` `method_not_found` |",
		"| `$/ping` | spec §6.2 | answered (not advertised) |",
		"| [`animus-queue-sqlite`](#animus-queue-sqlite) | `queue` | 2 of 3 | 1 | **2 pass, 1 fail, 1 skip** | **refused by the gate** |",
		"| 0.7 (fake host `0.7`) | protocol `1.1.0`, host `animus 0.7.0-rc.52`, `init_extensions` `project_binding` | accepted, protocol_version 1.1.0 | **refuses** (0.7.0-rc.34+, queue-v2.md §1.1): kind_capabilities.queue.extra.generation_fenced_leases_v1 is not true (crate_version \"0.3.2\") | not run: the daemon refuses to use the plugin (gate) |",
		"Conformance as the 0.6 daemon (`animus-plugin-conformance --daemon 0.6`, suites `generic`, `queue`): 4 scenarios, 2 pass, 1 fail, 1 skip.",
		"| [`animus-logs-loki`](#animus-logs-loki) | `log_storage_backend` | binary missing |",
		"**Binary missing:** bin/animus-logs-loki is not built",
		"Failed: `queue/lease`.",
		"- skipped `generic/cancel-request`: no $harness/slow",
		"Also served, beyond the spec tables: `queue/extra`.",
		"`kind_capabilities.queue` crate `0.3.2`, extra `{\"max_lease_batch\":4294967295}`",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("rendered matrix lacks %q", want)
		}
	}
	// Every differences entry of both plugins is rendered, also for the
	// plugin whose binary is missing.
	for _, d := range append(DifferencesOf("queue-sqlite"), DifferencesOf("logs-loki")...) {
		if !strings.Contains(doc, cell(d.Difference)) {
			t.Errorf("rendered matrix lacks difference %q", d.Difference)
		}
	}
	if ms := regexp.MustCompile(`\d+ ?ms\b`).FindString(doc); ms != "" {
		t.Errorf("rendered matrix holds a timing %q; it must be deterministic", ms)
	}
}

// TestRenderDeterministic: the same measurements render byte for byte the
// same, and renderings that differ only in version normalise equal.
func TestRenderDeterministic(t *testing.T) {
	a, b := render(t, sampleMatrix("v1")), render(t, sampleMatrix("v1"))
	if a != b {
		t.Fatal("two renderings of one matrix differ")
	}
	c := render(t, sampleMatrix("v2-dirty"))
	if a == c {
		t.Fatal("the version does not appear in the document")
	}
	if Normalize(a) != Normalize(c) {
		t.Errorf("renderings differing only in version do not normalise equal:\n%s", lineDiff(Normalize(a), Normalize(c)))
	}
}

func TestVersionLine(t *testing.T) {
	for _, tc := range []struct {
		versions map[string][]string
		want     string
	}{
		{nil, VersionPrefix + "none (no binary was found)"},
		{map[string][]string{"v1": {"a", "b"}}, VersionPrefix + "`v1`"},
		{map[string][]string{"v2": {"b"}, "v1": {"c", "a"}}, VersionPrefix + "mixed, rebuild with `make build`: `v1` (a, c); `v2` (b)"},
	} {
		if got := (&Matrix{Versions: tc.versions}).VersionLine(); got != tc.want {
			t.Errorf("VersionLine(%v) = %q, want %q", tc.versions, got, tc.want)
		}
	}
}

// TestQueueV2Gate: the matrix applies the 0.7 daemon's gate (the e2e
// suite's copy) to the queue under the 0.7 line only.
func TestQueueV2Gate(t *testing.T) {
	v2 := []string{"queue/v2/enqueue", "queue/v2/lease", "queue/v2/lease/renew", "queue/v2/lease/recover", "queue/v2/completion", "queue/v2/release_pending"}
	for _, tc := range []struct {
		name    string
		extra   string
		methods []string
		pass    bool
	}{
		{"0.3.2 queue", `{"max_lease_batch":4294967295,"priority_weighted":false}`, []string{"queue/lease"}, false},
		{"no extra", ``, nil, false},
		{"0.4.0 queue", `{"max_lease_batch":5,"priority_weighted":false,"generation_fenced_leases_v1":true}`, v2, true},
		{"batch too small", `{"max_lease_batch":4,"generation_fenced_leases_v1":true}`, v2, false},
		{"one method missing", `{"max_lease_batch":5,"generation_fenced_leases_v1":true}`, v2[1:], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &fakehost.InitializeResult{Capabilities: fakehost.PluginCapabilities{Methods: tc.methods}}
			if tc.extra != "" {
				res.KindCapabilities = map[string]fakehost.KindCapability{"queue": {CrateVersion: "x", Extra: json.RawMessage(tc.extra)}}
			}
			got := evaluate(Gates(line07, "queue")[0], res)
			if (got.Refusal == "") != tc.pass || strings.Contains(got.Refusal, "require_generation_fenced_queue") {
				t.Errorf("refusal = %q, want pass %t (without the error's prefix)", got.Refusal, tc.pass)
			}
		})
	}
	if len(Gates(line07, "durable_store")) != 0 || len(Gates(line06, "queue")) != 0 {
		t.Error("only the 0.7 line has a known gate, and only for the queue kind")
	}
}

func TestSentHandshake(t *testing.T) {
	wire := `12:00:00.000 --> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"host_info":{"name":"animus","version":"0.1.0"},"protocol_version":"1.2.0"}}
12:00:00.001 <-- {"jsonrpc":"2.0","id":1,"result":{}}`
	if got, want := sentHandshake(wire), "protocol `1.2.0`, host `animus 0.1.0`, no `init_extensions`"; got != want {
		t.Errorf("sentHandshake = %q, want %q", got, want)
	}
}

// TestGenerateReportsMissingBinaries: an empty bin/ yields a row per
// plugin that says its binary is missing, not an error, and a document
// that still carries every plugin's daemon lines and differences.
func TestGenerateReportsMissingBinaries(t *testing.T) {
	m, err := Generate(t.Context(), Options{BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Rows) != len(Plugins()) || m.Failed() {
		t.Fatalf("rows = %d (want %d), failed = %t", len(m.Rows), len(Plugins()), m.Failed())
	}
	doc := render(t, m)
	for _, r := range m.Rows {
		if want := "bin/" + r.Plugin.Binary() + " is not built"; !strings.Contains(r.Missing, want) {
			t.Errorf("%s: Missing = %q, want it to contain %q", r.Plugin.Dir, r.Missing, want)
		}
		if !strings.Contains(doc, "| [`"+r.Plugin.Binary()+"`](#"+r.Plugin.Binary()+") | `"+r.Plugin.Kind+"` | binary missing |") {
			t.Errorf("summary row of %s does not say the binary is missing", r.Plugin.Binary())
		}
	}
	if !strings.Contains(doc, VersionPrefix+"none (no binary was found)") {
		t.Error("version line does not say no binary was found")
	}
}
