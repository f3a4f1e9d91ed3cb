package durablesqlite

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
)

const binary = "animus-durable-sqlite"

// runnerBudget is the agent runner's budget for one durable call.
const runnerBudget = 60 * time.Second

// proc is one plugin process bound to a project, as the agent runner spawns
// it: the daemon's scrubbed environment, cwd = project root, the runner's
// handshake, every frame schema-checked.
type proc struct {
	t *testing.T
	h *fakehost.Host
}

// project is one project directory and how the runner spawns processes
// bound to it. The manifest is probed once, as discovery does, and its
// env_required reused for every spawn.
type project struct {
	t    *testing.T
	dir  string
	opts e2etest.Options
}

func newProject(t *testing.T) *project {
	t.Helper()
	dir := e2etest.Project(t)
	return &project{t: t, dir: dir, opts: e2etest.Options{Dir: dir, Declared: e2etest.Declared(t, binary),
		Handshake: fakehost.Handshake{Preset: fakehost.PresetDurableClient}}}
}

// start spawns a bound process whose violations fail the test.
func (pr *project) start() *proc {
	pr.t.Helper()
	return &proc{t: pr.t, h: e2etest.Spawn(pr.t, binary, pr.opts)}
}

// call sends a request with the runner's budget. A transport failure is
// returned as err; an RPC error as rpcErr.
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
		p.t.Fatalf("%s: %v", method, err)
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
