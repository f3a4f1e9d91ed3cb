package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// DurableSuite returns the durable_store scenarios (kind key "durable"). No
// official testkit suite exists for the kind; these follow durable.md §4
// (the crate docs plus the semantics the one real caller, the agent
// runner's model-call fence, relies on) and cover every method and every
// error code -32301..-32307 through the binary. Each scenario binds its
// processes to a fresh project directory with the runner's handshake.
func DurableSuite() []Scenario {
	return []Scenario{
		{"durable", "capabilities", scenarioDurableCapabilities},
		{"durable", "unbound-32305", scenarioDurableUnbound},
		{"durable", "epochs-monotonic-persisted", scenarioDurableEpochs},
		{"durable", "real-caller-fence", durableScenario(durableFence)},
		{"durable", "begin-step-resolution", durableScenario(durableResolution)},
		{"durable", "commit-idempotent-first-wins", durableScenario(durableCommitTwice)},
		{"durable", "commit-errors-32307-32302", durableScenario(durableCommitErrors)},
		{"durable", "ttl-expiry-32303", durableScenario(durableExpiry)},
		{"durable", "abandon-frees-key", durableScenario(durableAbandon)},
		{"durable", "query-run-32301", durableScenario(durableQueryRun)},
		{"durable", "replay-nondeterminism-32306", durableScenario(durableNondeterminism)},
		{"durable", "recover-in-flight", durableScenario(durableRecover)},
		{"durable", "payload-limit-32602", durableScenario(durablePayloadLimit)},
		{"durable", "invalid-params-32602", durableScenario(durableInvalidParams)},
		{"durable", "backend-unavailable-32304", scenarioDurableBackendDown},
		{"durable", "sigkill-keeps-commits", scenarioDurableRestart},
		{"durable", "concurrent-begin-one-new", scenarioDurableConcurrent},
	}
}

// durableMethods are the kind's methods (spec §5).
func durableMethods() []string {
	return []string{"durable/begin_workflow_run", "durable/begin_step", "durable/commit_step",
		"durable/abandon_step", "durable/recover_in_flight", "durable/query_run"}
}

// dProc is one bound plugin process.
type dProc struct {
	ctx context.Context
	h   *fakehost.Host
}

// durableSpawn starts a process in dir with the agent runner's handshake
// (project_binding to dir).
func durableSpawn(ctx context.Context, s *Session, dir string) (dProc, *fakehost.InitializeResult, error) {
	h, res, err := s.SpawnReady(ctx, fakehost.Handshake{Preset: fakehost.PresetDurableClient},
		func(c *fakehost.Config) { c.Dir = dir })
	return dProc{ctx, h}, res, err
}

// durableFresh spawns the first process of a fresh project directory (the
// session removes it); later processes join it through durableSpawn.
func durableFresh(ctx context.Context, s *Session) (dProc, *fakehost.InitializeResult, string, error) {
	dir, err := s.TempDir()
	if err != nil {
		return dProc{}, nil, "", err
	}
	p, res, err := durableSpawn(ctx, s, dir)
	return p, res, dir, err
}

// call decodes the result into out; an RPC error is returned as an error.
func (p dProc) call(method string, params, out any) error {
	resp, err := call(p.ctx, p.h, 10*time.Second, method, params)
	if err != nil {
		return err
	}
	if err := wantResult(resp, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, clip(mustJSON(params)), err)
	}
	return nil
}

// fails expects an error with code.
func (p dProc) fails(method string, params any, code int) error {
	resp, err := call(p.ctx, p.h, 10*time.Second, method, params)
	if err != nil {
		return err
	}
	if err := wantError(resp, code, ""); err != nil {
		return fmt.Errorf("%s %s: %w", method, clip(mustJSON(params)), err)
	}
	return nil
}

func (p dProc) run(run, phase string) (uint64, error) {
	var r struct {
		Epoch *uint64 `json:"epoch"`
	}
	if err := p.call("durable/begin_workflow_run", map[string]any{"run_id": run, "phase_id": phase}, &r); err != nil {
		return 0, err
	}
	if r.Epoch == nil {
		return 0, fmt.Errorf("begin_workflow_run result has no epoch")
	}
	return *r.Epoch, nil
}

type dBegin struct {
	Status      string          `json:"status"`
	StepID      string          `json:"step_id"`
	PriorOutput json.RawMessage `json:"prior_output"`
	PriorError  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"prior_error"`
	ExpiresAt *string `json:"reservation_expires_at"`
}

func stepParams(run, phase, name, key string) map[string]any {
	return map[string]any{"run_id": run, "phase_id": phase, "step_name": name, "idempotency_key": key}
}

// begin calls begin_step and checks the answer's status (want "" = any).
func (p dProc) begin(params map[string]any, want string) (dBegin, error) {
	var b dBegin
	if err := p.call("durable/begin_step", params, &b); err != nil {
		return b, err
	}
	if want != "" && b.Status != want {
		return b, fmt.Errorf("begin_step %v: status %q, want %q", params["idempotency_key"], b.Status, want)
	}
	if b.StepID == "" {
		return b, fmt.Errorf("begin_step %v: empty step_id", params["idempotency_key"])
	}
	if b.Status == "in_progress" {
		if b.ExpiresAt == nil {
			return b, fmt.Errorf("in_progress without reservation_expires_at")
		}
		if _, err := time.Parse(time.RFC3339Nano, *b.ExpiresAt); err != nil {
			return b, fmt.Errorf("reservation_expires_at %q: %v", *b.ExpiresAt, err)
		}
	}
	return b, nil
}

func (p dProc) commit(stepID, outcome string, payload any) error {
	params := map[string]any{"step_id": stepID, "outcome": outcome}
	if outcome == "error" {
		params["error"] = payload
	} else if payload != nil {
		params["output"] = payload
	}
	var r struct {
		Ack *bool `json:"ack"`
	}
	if err := p.call("durable/commit_step", params, &r); err != nil {
		return err
	}
	if r.Ack == nil || !*r.Ack {
		return fmt.Errorf("commit_step %s: ack %v, want true", stepID, r.Ack)
	}
	return nil
}

func (p dProc) abandon(stepID string) (bool, error) {
	var r struct {
		Ack *bool `json:"ack"`
	}
	if err := p.call("durable/abandon_step", map[string]any{"step_id": stepID, "reason": "conformance"}, &r); err != nil {
		return false, err
	}
	if r.Ack == nil {
		return false, fmt.Errorf("abandon_step result has no ack")
	}
	return *r.Ack, nil
}

type dStep struct {
	StepID         string          `json:"step_id"`
	StepName       string          `json:"step_name"`
	IdempotencyKey string          `json:"idempotency_key"`
	Outcome        string          `json:"outcome"`
	CommittedAt    string          `json:"committed_at"`
	Output         json.RawMessage `json:"output"`
}

func (p dProc) query(run, phase string) ([]dStep, error) {
	var r struct {
		RunID, PhaseID, Status string
		Steps                  []dStep `json:"steps"`
	}
	if err := p.call("durable/query_run", map[string]any{"run_id": run, "phase_id": phase}, &r); err != nil {
		return nil, err
	}
	return r.Steps, nil
}

type dInFlight struct {
	RunID             string  `json:"run_id"`
	PhaseID           string  `json:"phase_id"`
	LastCommittedStep *string `json:"last_committed_step"`
}

func (p dProc) recover(since uint64) ([]dInFlight, error) {
	var r struct {
		InFlight []dInFlight `json:"in_flight"`
	}
	err := p.call("durable/recover_in_flight", map[string]any{"since_epoch": since}, &r)
	return r.InFlight, err
}

func mustJSON(v any) []byte {
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

// sameJSON compares two JSON texts structurally.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && string(mustJSON(x)) == string(mustJSON(y))
}

// durableScenario wraps a scenario body that needs one bound process in a
// fresh project directory.
func durableScenario(body func(p dProc, s *Session, dir string) error) func(context.Context, *Session) Outcome {
	return func(ctx context.Context, s *Session) Outcome {
		p, _, dir, err := durableFresh(ctx, s)
		if err != nil {
			return failf("%v", err)
		}
		if err := body(p, s, dir); err != nil {
			if sk, ok := err.(skipError); ok {
				return skipf("%s", string(sk))
			}
			return failf("%v", err)
		}
		return pass()
	}
}

type skipError string

func (e skipError) Error() string { return string(e) }

// scenarioDurableCapabilities: plugin_kind durable_store, all six methods
// advertised, and kind_capabilities.durable_store with crate 0.1.0 and a
// DurableStoreCapabilities extra whose three fields are all present.
func scenarioDurableCapabilities(ctx context.Context, s *Session) Outcome {
	_, res, _, err := durableFresh(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	if res.PluginInfo.PluginKind != "durable_store" {
		return failf("plugin_kind %q", res.PluginInfo.PluginKind)
	}
	for _, m := range append(durableMethods(), "health/check") {
		if !contains(res.Capabilities.Methods, m) {
			return failf("capabilities.methods lacks %s", m)
		}
	}
	kc, ok := res.KindCapabilities["durable_store"]
	if !ok || kc.CrateVersion != "0.1.0" {
		return failf("kind_capabilities.durable_store = %+v, want crate_version 0.1.0", kc)
	}
	var extra map[string]json.RawMessage
	if err := json.Unmarshal(kc.Extra, &extra); err != nil {
		return failf("extra %s: %v", kc.Extra, err)
	}
	for _, k := range []string{"default_reservation_ttl_secs", "max_payload_bytes", "supports_recovery"} {
		if _, ok := extra[k]; !ok {
			return failf("extra lacks %s (always emitted): %s", k, kc.Extra)
		}
	}
	if err := s.Schemas.Validate(schemacheck.DurableProtocol, "DurableStoreCapabilities", kc.Extra); err != nil {
		return failf("%v", err)
	}
	return pass()
}

// scenarioDurableUnbound: a handshake without project_binding (the generic
// host, the health probe) or with a relative root succeeds, but every
// durable method then answers -32305 and nothing is written to the cwd.
func scenarioDurableUnbound(ctx context.Context, s *Session) Outcome {
	dir, err := s.TempDir()
	if err != nil {
		return failf("%v", err)
	}
	relative := json.RawMessage(`{"capabilities":{"cancellation":true,"progress":false,"streaming":false},"host_info":{"name":"animus-agent-runner","version":"0.1.0"},"init_extensions":{"project_binding":{"project_root":"relative/project","repo_scope":"x"}},"protocol_version":"1.1.0"}`)
	for _, hs := range []fakehost.Handshake{{Preset: fakehost.PresetDaemon}, {RawParams: relative}} {
		h, _, err := s.SpawnReady(ctx, hs, func(c *fakehost.Config) { c.Dir = dir })
		if err != nil {
			return failf("%v", err)
		}
		p := dProc{ctx, h}
		params := []any{
			map[string]any{"run_id": "r", "phase_id": "p"}, stepParams("r", "p", "s", "k"),
			map[string]any{"step_id": "s", "outcome": "success"}, map[string]any{"step_id": "s"},
			map[string]any{"since_epoch": 0}, map[string]any{"run_id": "r", "phase_id": "p"},
		}
		for i, m := range durableMethods() {
			if err := p.fails(m, params[i], -32305); err != nil {
				return failf("%v", err)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		return failf("an unbound plugin wrote into its cwd: %v", entries)
	}
	return pass()
}

// scenarioDurableEpochs: epochs rise with every begin_workflow_run (a repeat
// too), are shared by processes on one project, and survive SIGKILL.
func scenarioDurableEpochs(ctx context.Context, s *Session) Outcome {
	a, _, dir, err := durableFresh(ctx, s)
	if err != nil {
		return failf("%v", err)
	}
	var seen []uint64
	for _, run := range []string{"r1", "r1", "r2"} {
		e, err := a.run(run, "p")
		if err != nil {
			return failf("%v", err)
		}
		seen = append(seen, e)
	}
	b, _, err := durableSpawn(ctx, s, dir)
	if err != nil {
		return failf("%v", err)
	}
	if e, err := b.run("r3", "p"); err != nil {
		return failf("%v", err)
	} else {
		seen = append(seen, e)
	}
	a.h.Kill()
	b.h.Kill()
	c, _, err := durableSpawn(ctx, s, dir)
	if err != nil {
		return failf("%v", err)
	}
	if e, err := c.run("r1", "p"); err != nil {
		return failf("%v", err)
	} else {
		seen = append(seen, e)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			return failf("epochs %v: not strictly increasing (SIGKILL and a second process included)", seen)
		}
	}
	return pass()
}
