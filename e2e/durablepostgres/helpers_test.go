package durablepostgres

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// binaryName is the plugin under test.
var binaryName = pgns.Durable.Binary

const (
	sqliteName = "animus-durable-sqlite"
)

// durableLockClass is the first key of pgstore's namespace advisory lock
// ("DURA"); the second is hashtext(schema).
const durableLockClass = 0x44555241

// codeUnavailable is -32304: the backend is unavailable (data.retryable
// says whether a retry may succeed).
const codeUnavailable = -32304

// runnerBudget is the agent runner's budget for one durable call.
const runnerBudget = 60 * time.Second

// host is one simulated machine: its own project root, the shared
// namespace. Every process it starts is bound to its root with the agent
// runner's handshake, its frames schema-checked.
type host struct {
	t    *testing.T
	name string
	opts e2etest.Options
}

// newHost makes a host with a fresh project root whose processes reach
// s's namespace, plus extra environment (NAME → value).
func newHost(t *testing.T, name string, s pgns.NS, declared []string, extra map[string]string) *host {
	t.Helper()
	return &host{t: t, name: name, opts: e2etest.Options{Dir: e2etest.Project(t), Env: s.Map(extra), Declared: declared,
		Handshake: fakehost.Handshake{Preset: fakehost.PresetDurableClient}}}
}

// config is the host's spawn configuration, for tests that start and
// kill processes themselves.
func (h *host) config() fakehost.Config {
	return e2etest.Config(h.t, binaryName, h.opts)
}

// start spawns a bound process whose violations fail the test.
func (h *host) start() *proc {
	h.t.Helper()
	return &proc{t: h.t, h: e2etest.Spawn(h.t, binaryName, h.opts)}
}

// proc is one plugin process.
type proc struct {
	t *testing.T
	h *fakehost.Host
}

// call sends a request with the runner's budget. A transport failure is
// returned as err; an RPC error as rpcErr. It never touches the test.
func (p *proc) call(method string, params, out any) (rpcErr *fakehost.RPCError, err error) {
	return e2etest.Try(p.h, runnerBudget, method, params, out)
}

// must is call for requests that have to succeed.
func (p *proc) must(method string, params, out any) {
	p.t.Helper()
	rpcErr, err := p.call(method, params, out)
	if err == nil && rpcErr != nil {
		err = rpcErr
	}
	if err != nil {
		p.t.Fatalf("%s: %v\n--- wire log ---\n%s", method, err, p.h.WireLog())
	}
}

func (p *proc) beginRun(run, phase string) uint64 {
	p.t.Helper()
	var r struct {
		Epoch uint64 `json:"epoch"`
	}
	p.must("durable/begin_workflow_run", map[string]string{"run_id": run, "phase_id": phase}, &r)
	return r.Epoch
}

// beginResult is BeginStepResponse.
type beginResult struct {
	Status      string          `json:"status"`
	StepID      string          `json:"step_id"`
	PriorOutput json.RawMessage `json:"prior_output"`
	ExpiresAt   string          `json:"reservation_expires_at"`
}

func stepParams(run, phase, name, key string) map[string]string {
	return map[string]string{"run_id": run, "phase_id": phase, "step_name": name, "idempotency_key": key}
}

// stepRecord is StepRecord.
type stepRecord struct {
	StepID         string          `json:"step_id"`
	StepName       string          `json:"step_name"`
	IdempotencyKey string          `json:"idempotency_key"`
	Outcome        string          `json:"outcome"`
	Output         json.RawMessage `json:"output"`
}

func (p *proc) query(run, phase string) []stepRecord {
	p.t.Helper()
	var r struct {
		Steps []stepRecord `json:"steps"`
	}
	p.must("durable/query_run", map[string]string{"run_id": run, "phase_id": phase}, &r)
	return r.Steps
}

// inFlight is InFlightRun with this store's replay_state.
type inFlight struct {
	RunID             string  `json:"run_id"`
	PhaseID           string  `json:"phase_id"`
	LastCommittedStep *string `json:"last_committed_step"`
	ReplayState       struct {
		Epoch       uint64 `json:"epoch"`
		Outstanding []struct {
			StepID         string `json:"step_id"`
			StepName       string `json:"step_name"`
			IdempotencyKey string `json:"idempotency_key"`
		} `json:"outstanding"`
	} `json:"replay_state"`
}

func (p *proc) recover(since uint64) []inFlight {
	p.t.Helper()
	var r struct {
		InFlight []inFlight `json:"in_flight"`
	}
	p.must("durable/recover_in_flight", map[string]uint64{"since_epoch": since}, &r)
	return r.InFlight
}

// shutdown runs the daemon's ladder and requires a clean exit by itself.
func (p *proc) shutdown() {
	p.t.Helper()
	e2etest.Shutdown(p.t, p.h, fakehost.LadderDaemon)
}

// retryable reports whether rpcErr is -32304 with data.retryable true.
func retryable(rpcErr *fakehost.RPCError) bool {
	if rpcErr == nil || rpcErr.Code != codeUnavailable {
		return false
	}
	var d struct {
		Retryable bool `json:"retryable"`
	}
	return json.Unmarshal(rpcErr.Data, &d) == nil && d.Retryable
}
