package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// Status is a scenario's verdict.
type Status string

// The verdicts.
const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// Outcome is what a scenario function returns.
type Outcome struct {
	Status Status
	Reason string
}

func pass() Outcome { return Outcome{Status: Pass} }

func failf(format string, args ...any) Outcome {
	return Outcome{Status: Fail, Reason: fmt.Sprintf(format, args...)}
}

func skipf(format string, args ...any) Outcome {
	return Outcome{Status: Skip, Reason: fmt.Sprintf(format, args...)}
}

// Scenario is one black-box check.
type Scenario struct {
	Suite string
	Name  string
	Run   func(ctx context.Context, s *Session) Outcome
}

// ID is "suite/name".
func (sc Scenario) ID() string { return sc.Suite + "/" + sc.Name }

// Target is the binary under test and what the preliminary probe and
// handshake learned about it.
type Target struct {
	Binary   string
	Kind     string // suite kind: subject, trigger, transport, log-storage, queue, queue-v2, durable, notifier, custom
	Schemas  *schemacheck.Set
	Env      map[string]string // overlay for the daemon's environment (upstream URLs, tokens)
	Manifest *fakehost.Manifest
	Init     *fakehost.InitializeResult
	// Daemon is the daemon line every scenario's processes are spawned
	// under: each daemon preset a scenario names sends that line's bytes
	// (fakehost.Daemon). RunAll sets it from Options.Daemon; the zero
	// value keeps the presets' own values.
	Daemon fakehost.Daemon
	// Isolate, when set, gives each scenario a store of its own
	// (Options.Isolate); RunAll sets it.
	Isolate IsolateFunc
	// Unreachable (Options.Unreachable); RunAll sets it.
	Unreachable map[string]string
}

// IsolateFunc makes one fresh, empty store for a plugin whose state is not
// keyed by the project root it is bound to (a database namespace rather
// than a file under the root), so that scenarios expecting an empty store
// get one, as a fresh project root gives a file-backed plugin. env
// overlays the target's environment for every process that uses the
// store; cleanup (may be nil) removes it and runs when the scenario ends,
// after its processes are gone. It may be called from several goroutines.
type IsolateFunc func() (env map[string]string, cleanup func(), err error)

// Prepare probes the manifest and runs one throw-away handshake, like the
// official harness. An error here is a harness error (exit 2), not a FAIL.
func Prepare(ctx context.Context, binary, kind string, schemas *schemacheck.Set, env map[string]string) (*Target, error) {
	abs, err := filepath.Abs(binary)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("plugin binary: %w", err)
	}
	t := &Target{Binary: abs, Schemas: schemas, Env: env}
	if t.Manifest, err = fakehost.Probe(ctx, abs, fakehost.ProbeOptions{Env: env}); err != nil {
		return nil, fmt.Errorf("manifest probe: %w", err)
	}
	if kind == "" {
		kind = t.Manifest.PluginKind
	}
	if t.Kind, err = NormalizeKind(kind); err != nil {
		return nil, err
	}
	s := &Session{Target: t}
	defer s.close()
	if _, t.Init, err = s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetDaemon}); err != nil {
		return nil, fmt.Errorf("initial handshake: %w", err)
	}
	return t, nil
}

// NormalizeKind maps the names people use (testkit suite names, plugin_kind
// values) to suite names.
func NormalizeKind(kind string) (string, error) {
	switch strings.ToLower(kind) {
	case "subject", "subject_backend":
		return "subject", nil
	case "trigger", "trigger_backend":
		return "trigger", nil
	case "transport", "transport_backend":
		return "transport", nil
	case "log-storage", "log_storage", "log_storage_backend", "logs":
		return "log-storage", nil
	case "queue":
		return "queue", nil
	case "queue-v2", "queue_v2", "queue/v2":
		return "queue-v2", nil
	case "durable", "durable_store":
		return "durable", nil
	case "notifier":
		return "notifier", nil
	case "custom", "generic", "provider", "workflow_runner", "memory_store":
		return "custom", nil
	}
	return "", fmt.Errorf("unknown kind %q (want subject, trigger, transport, log-storage, queue, queue-v2, durable, notifier or custom)", kind)
}

// Result is one scenario's verdict with its evidence.
type Result struct {
	ID      string        `json:"id"`
	Status  Status        `json:"status"`
	Reason  string        `json:"reason,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
	WireLog string        `json:"wire_log,omitempty"` // failing scenarios only, unless Options.KeepWire
	Stderr  string        `json:"stderr,omitempty"`
}

// Report is a whole run.
type Report struct {
	Binary  string   `json:"binary"`
	Kind    string   `json:"kind"`
	Plugin  string   `json:"plugin"`
	Daemon  string   `json:"daemon,omitempty"` // the line, when one was picked
	Results []Result `json:"results"`
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Skipped int      `json:"skipped"`
}

// Options tune RunAll.
type Options struct {
	Filter   string        // run only scenarios whose id contains this
	Timeout  time.Duration // per scenario (default 30 s)
	Out      io.Writer     // one line per scenario as it finishes; nil for none
	Verbose  bool          // print wire logs of failing scenarios to Out
	Parallel bool          // reserved: scenarios run one at a time
	// Daemon runs every scenario under this daemon line (Target.Daemon);
	// the zero value leaves the target's.
	Daemon fakehost.Daemon
	// Isolate, when set, is called lazily once per scenario (before its
	// first process is spawned) and its env overlaid on every process the
	// scenario spawns; a scenario that asks for a second empty store in
	// the same run (a queue scenario's fresh project) gets another call
	// for it. Each store's cleanup runs when its scenario ends. The
	// scenarios themselves do not change: for a file-backed plugin the
	// fresh project root they make already isolates them.
	Isolate IsolateFunc
	// Unreachable, for a plugin whose store is not under the project root,
	// is an environment overlay that leaves its store unreachable (a
	// database address nothing answers at): the backend-unavailable
	// scenarios use it where a file-backed plugin gets a project root its
	// store cannot be created under.
	Unreachable map[string]string
	// KeepWire keeps every scenario's wire log and stderr in its Result,
	// not only a failing one's, so that two runs can be compared.
	KeepWire bool
}

// RunAll runs the scenarios in order against t.
func RunAll(ctx context.Context, t *Target, scenarios []Scenario, o Options) Report {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if !o.Daemon.IsZero() || o.Isolate != nil || o.Unreachable != nil {
		under := *t // the caller's target keeps its own line and stores
		if !o.Daemon.IsZero() {
			under.Daemon = o.Daemon
		}
		if o.Isolate != nil {
			under.Isolate = o.Isolate
		}
		if o.Unreachable != nil {
			under.Unreachable = o.Unreachable
		}
		t = &under
	}
	rep := Report{Binary: t.Binary, Kind: t.Kind, Plugin: t.Manifest.Name}
	if !t.Daemon.IsZero() {
		rep.Daemon = t.Daemon.String()
	}
	for _, sc := range scenarios {
		if o.Filter != "" && !strings.Contains(sc.ID(), o.Filter) {
			continue
		}
		res := runOne(ctx, t, sc, o.Timeout, o.KeepWire)
		switch res.Status {
		case Pass:
			rep.Passed++
		case Fail:
			rep.Failed++
		case Skip:
			rep.Skipped++
		}
		rep.Results = append(rep.Results, res)
		if o.Out != nil {
			line := fmt.Sprintf("%-4s  %-44s %6dms", res.Status, res.ID, res.Elapsed.Milliseconds())
			if res.Reason != "" {
				line += "  " + res.Reason
			}
			fmt.Fprintln(o.Out, line)
			if o.Verbose && res.Status == Fail {
				fmt.Fprintf(o.Out, "      wire log:\n%s\n      stderr:\n%s\n", indent(res.WireLog), indent(res.Stderr))
			}
		}
	}
	return rep
}

func runOne(ctx context.Context, t *Target, sc Scenario, timeout time.Duration, keepWire bool) (res Result) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s := &Session{Target: t}
	start := time.Now()
	res.ID = sc.ID()
	defer func() {
		if v := recover(); v != nil {
			res.Status, res.Reason = Fail, fmt.Sprintf("scenario panicked: %v", v)
		}
		res.Elapsed = time.Since(start)
		if res.Status == Fail || keepWire {
			res.WireLog, res.Stderr = s.evidence()
		}
		s.close()
	}()
	out := sc.Run(ctx, s)
	if out.Status == Pass {
		// Stdout discipline and schemas hold in every scenario.
		if v := s.violations(); len(v) > 0 {
			out = failf("wire violations: %s", strings.Join(v, "; "))
		}
	}
	if out.Status == Fail && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		out.Reason += fmt.Sprintf(" (scenario timed out after %v)", timeout)
	}
	res.Status, res.Reason = out.Status, out.Reason
	return res
}

// WriteJSON writes the report for --report-json.
func (r Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Summary is the closing line.
func (r Report) Summary() string {
	suite := r.Kind
	if r.Daemon != "" {
		suite += ", daemon " + r.Daemon
	}
	return fmt.Sprintf("conformance %s (%s): %d scenarios, %d pass, %d fail, %d skip",
		r.Plugin, suite, len(r.Results), r.Passed, r.Failed, r.Skipped)
}

func indent(s string) string {
	return "        " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n        ")
}
