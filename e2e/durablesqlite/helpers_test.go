package durablesqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/binaries"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

const binary = "animus-durable-sqlite"

// proc is one plugin process bound to a project, as the agent runner spawns
// it: the daemon's scrubbed environment, cwd = project root, the runner's
// handshake, every frame schema-checked.
type proc struct {
	t *testing.T
	h *fakehost.Host
}

// project is one project directory and the fake host configuration for
// processes bound to it. The manifest is probed once, as discovery does, and
// its env_required reused for every spawn.
type project struct {
	t   *testing.T
	dir string
	cfg fakehost.Config
}

func newProject(t *testing.T) *project {
	t.Helper()
	schemas, err := schemacheck.Default()
	if err != nil {
		t.Fatal(err)
	}
	bin := binaries.Path(t, binary)
	m, err := fakehost.Probe(context.Background(), bin, fakehost.ProbeOptions{Schemas: schemas})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return &project{t: t, dir: dir, cfg: fakehost.Config{Binary: bin, Dir: dir, EnvMode: fakehost.EnvDaemon,
		Schemas: schemas, Declared: m.EnvNames()}}
}

// start spawns a bound process whose violations fail the test.
func (pr *project) start() *proc {
	pr.t.Helper()
	h := fakehost.New(pr.t, pr.cfg)
	if _, err := h.Initialize(context.Background(), fakehost.Handshake{Preset: fakehost.PresetDurableClient}); err != nil {
		pr.t.Fatal(err)
	}
	return &proc{t: pr.t, h: h}
}

// call sends a request with the runner's 60 s budget. A transport failure
// is returned as err; an RPC error as rpcErr.
func (p *proc) call(method string, params, out any) (rpcErr *fakehost.RPCError, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := p.h.Call(ctx, method, params)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return resp.Error, nil
	}
	if out != nil {
		if err := json.Unmarshal(resp.Result, out); err != nil {
			return nil, fmt.Errorf("%s result %s: %w", method, resp.Result, err)
		}
	}
	return nil, nil
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
	rep, err := p.h.Shutdown(context.Background(), fakehost.LadderDaemon)
	if err != nil || !rep.ExitedByItself || rep.ExitCode != 0 {
		p.t.Fatalf("shutdown: %+v %v", rep, err)
	}
}
