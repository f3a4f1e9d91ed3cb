package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// The daemon's per-call process model for queues, shared by the queue and
// queue-v2 suites: one project root per scenario, one fresh process per
// call, and every result checked against its schema.

// queueProject is one scenario's project root, shared by its processes.
type queueProject struct {
	s   *Session
	dir string
	hs  fakehost.Handshake // the queue client's: 0.6 by default, 0.7 for queue-v2
	env map[string]string  // overlays the target's env (ANIMUS_QUEUE_LEASE_TTL_SECS)
	// store overlays the scenario's environment with this project's own
	// store when the target isolates stores (Target.Isolate) and the
	// project is not the scenario's first; nil otherwise.
	store map[string]string
	// kill ends each call with SIGKILL once the reply is in, instead of
	// shutdown/exit: the reply a crashed daemon never saw, or a plugin
	// that never got to close its database.
	kill bool
}

func newQueueProject(s *Session) (*queueProject, error) {
	dir, err := s.TempDir()
	if err != nil {
		return nil, err
	}
	store, err := s.claimStore()
	if err != nil {
		return nil, err
	}
	return &queueProject{s: s, dir: dir, store: store, hs: fakehost.Handshake{Preset: fakehost.PresetQueueClient}}, nil
}

// spawn starts one process in the project root and completes the queue
// client's handshake.
func (p *queueProject) spawn(ctx context.Context) (*fakehost.Host, *fakehost.InitializeResult, error) {
	return p.s.SpawnReady(ctx, p.hs, func(c *fakehost.Config) {
		c.Dir = p.dir
		if len(p.store) > 0 || len(p.env) > 0 {
			c.Env = overlay(c.Env, p.store, p.env)
		}
	})
}

// call is one daemon queue call: a fresh process in the project root, the
// queue client's handshake (with project_binding), the method, then
// shutdown and exit; the process must exit by itself. Like the 0.7 daemon,
// it runs the queue gate before any queue/v2/* method.
func (p *queueProject) call(ctx context.Context, method, params string) (*fakehost.Response, error) {
	h, init, err := p.spawn(ctx)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(method, "queue/v2/") {
		if _, err := RequireGenerationFencedQueue(init); err != nil {
			h.Kill()
			return nil, fmt.Errorf("%s not sent: %w", method, err)
		}
	}
	var ps any
	if params != "" {
		ps = json.RawMessage(params)
	}
	resp, err := call(ctx, h, 30*time.Second, method, ps)
	if p.kill {
		if kerr := h.Kill(); err == nil {
			err = kerr
		}
		if err != nil {
			return nil, err
		}
		return resp, validateQueueResult(p.s.Schemas, method, resp.Result)
	}
	rep, serr := h.Shutdown(ctx, fakehost.LadderDaemon)
	switch {
	case err != nil:
		return nil, err
	case serr != nil:
		return nil, serr
	case !rep.ExitedByItself || rep.ExitCode != 0:
		return nil, fmt.Errorf("after %s the process did not exit by itself on shutdown/exit (code %d)", method, rep.ExitCode)
	}
	if resp.Error == nil {
		if err := validateQueueResult(p.s.Schemas, method, resp.Result); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// entryResults are the results that carry QueueEntry values (validated
// after normalising their subjects) and the v2 results, which the shared
// schemacheck table does not know: each is exactly this type on the wire.
var entryResults = map[string]string{
	"queue/list":               "QueueListResponse",
	"queue/lease":              "QueueLeaseResponse",
	"queue/v2/enqueue":         "QueueEnqueueV2Response",
	"queue/v2/lease":           "QueueLeaseV2Response",
	"queue/v2/lease/renew":     "QueueLeaseMutationResponse",
	"queue/v2/lease/recover":   "QueueLeaseMutationResponse",
	"queue/v2/completion":      "QueueLeaseMutationResponse",
	"queue/v2/release_pending": "QueueLeaseMutationResponse",
}

func validateQueueResult(set *schemacheck.Set, method string, raw json.RawMessage) error {
	typ, ok := entryResults[method]
	if !ok {
		return nil
	}
	if err := validateEntries(set, typ, raw); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// validateEntries checks a list or lease result against its schema after
// turning legacy SubjectRef forms into the generic one, which is the only
// form the derived schema knows (shared/schemas/README.md). A v2 lease
// holds its entries one level down, in leased[].entry.
func validateEntries(set *schemacheck.Set, typ string, raw json.RawMessage) error {
	if set == nil {
		return nil
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	for _, key := range []string{"entries", "leased"} {
		list, _ := doc[key].([]any)
		for _, e := range list {
			entry, _ := e.(map[string]any)
			if inner, ok := entry["entry"].(map[string]any); ok && typ == "QueueLeaseV2Response" {
				entry = inner
			}
			d, _ := entry["subject_dispatch"].(map[string]any)
			if d != nil && d["subject"] != nil {
				d["subject"] = genericSubject(d["subject"])
			}
		}
	}
	norm, _ := json.Marshal(doc)
	return set.Validate(schemacheck.QueueProtocol, typ, norm)
}

func genericSubject(v any) any {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return v
	}
	for tag, inner := range m {
		in, _ := inner.(map[string]any)
		switch tag {
		case "Task":
			return map[string]any{"kind": "animus.task", "id": in["id"]}
		case "Requirement":
			return map[string]any{"kind": "animus.requirement", "id": in["id"]}
		case "Custom":
			return map[string]any{"kind": "custom", "id": in["title"], "title": in["title"], "description": in["description"]}
		}
	}
	return v
}
