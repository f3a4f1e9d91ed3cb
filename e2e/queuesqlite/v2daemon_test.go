package queuesqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/animus-plugins/animus-plugins/e2e/conformance"
	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// The Animus 0.7 queue client in the per-call process model (queue-v2.md
// §4.1): every call is a fresh process, initialize with the per-kind 0.7
// handshake (protocol 1.1.0, host 0.7.0-rc.52, project_binding), the gate
// on the initialize result, initialized, one method, shutdown, exit.

// processes07 counts the plugin processes spawn07 started, for the
// measured numbers the tests log.
var processes07 atomic.Int64

// spawn07 starts a queue process the way the 0.7 queue client does and
// runs the daemon's gate on its initialize result. A binary that fails the
// gate cannot serve a 0.7 daemon at all, so the test stops there, saying so.
func (p *project) spawn07() *fakehost.Host {
	p.t.Helper()
	processes07.Add(1)
	h := fakehost.New(p.t, e2etest.Config(p.t, binaryName, e2etest.Options{Dir: p.dir, EnvMode: fakehost.EnvDaemonNarrow,
		Env: p.env, Declared: p.declared, Daemon: fakehost.Daemon07}))
	ctx, cancel := context.WithTimeout(context.Background(), e2etest.SpawnTimeout)
	defer cancel()
	res, err := h.Initialize(ctx, fakehost.Handshake{Preset: fakehost.PresetQueueClient})
	if err != nil {
		p.t.Fatalf("0.7 queue client handshake: %v", err)
	}
	if _, err := conformance.RequireGenerationFencedQueue(res); err != nil {
		p.t.Fatalf("the binary does not serve queue/v2 (generation_fenced_leases_v1), a 0.7 daemon refuses it: %v", err)
	}
	return h
}

// call07 is one 0.7 queue call in its own process.
func (p *project) call07(method string, params any) *fakehost.Response {
	p.t.Helper()
	return p.once(p.spawn07(), method, params)
}

// result07 is call07 that must succeed, decoded into v (strictly when
// strict: the daemon's v2 types deny unknown fields).
func (p *project) result07(method string, params any, v any, strict bool) {
	p.t.Helper()
	resp := p.call07(method, params)
	if resp.Error != nil {
		p.t.Fatalf("%s: error %d %s", method, resp.Error.Code, resp.Error.Message)
	}
	var err error
	if strict {
		err = queuev2.DecodeStrict(resp.Result, v)
	} else {
		err = json.Unmarshal(resp.Result, v)
	}
	if err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
}

// tryStrict is one v2 call on a long-lived process without a test at hand
// (goroutines, processes killed mid-call): an error answer or a result
// that does not decode strictly comes back as the error.
func tryStrict(h *fakehost.Host, method string, params, v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), e2etest.CallTimeout)
	defer cancel()
	resp, err := h.Call(ctx, method, params)
	switch {
	case err != nil:
		return err
	case resp.Error != nil:
		return fmt.Errorf("%s: %w", method, resp.Error)
	}
	return queuev2.DecodeStrict(resp.Result, v)
}

// daemon07 is one 0.7 daemon instance: a fresh owner id per start.
type daemon07 struct {
	p     *project
	owner string
}

func (p *project) startDaemon07() *daemon07 {
	return &daemon07{p: p, owner: "daemon-" + queuev2.NewUUID()}
}

// lease is one queue/v2/lease of the dispatch tick: max fresh UUID
// workflow ids, exclude = every locally tracked fence (omitted when none).
// kept maps entries put back earlier to the workflow id they must keep.
// Every leased item passes the daemon's checks or the test fails: the
// daemon would strand it.
func (d *daemon07) lease(max int, exclude []queuev2.ExecutionFence, kept map[string]string) (queuev2.LeaseResponse, []queuev2.QueueEntry) {
	t := d.p.t
	t.Helper()
	params, ids := leaseParams(d.owner, max, exclude)
	var r queuev2.LeaseResponse
	d.p.result07("queue/v2/lease", params, &r, true)
	if r.Leased == nil {
		t.Fatalf("queue/v2/lease: no leased array")
	}
	entries := make([]queuev2.QueueEntry, len(r.Leased))
	fresh := 0 // fresh ids are consumed in order, only by entries without one
	for i, fe := range r.Leased {
		if err := acceptLeased(fe, d.owner, ids, kept[idOf(fe)]); err != nil {
			t.Fatalf("queue/v2/lease item %d: the daemon would strand it: %v", i, err)
		}
		if kept[idOf(fe)] == "" {
			if fresh >= len(ids) || fe.Execution.WorkflowID != ids[fresh] {
				t.Errorf("item %d took workflow id %s, the next unused one was %v", i, fe.Execution.WorkflowID, ids[fresh:])
			}
			fresh++
		}
		entries[i] = fe.Entry
	}
	return r, entries
}

// leaseParams are a dispatch tick's queue/v2/lease params: max fresh UUID
// workflow ids (also returned) and exclude, omitted when empty.
func leaseParams(owner string, max int, exclude []queuev2.ExecutionFence) (map[string]any, []string) {
	ids := make([]string, max)
	for i := range ids {
		ids[i] = queuev2.NewUUID()
	}
	params := map[string]any{"max": max, "owner_id": owner, "workflow_ids": ids}
	if len(exclude) > 0 {
		params["exclude"] = exclude
	}
	return params, ids
}

func idOf(fe queuev2.FencedQueueEntry) string { return fe.Execution.QueueLease.EntryID }

// acceptLeased is the tick's check of one leased item (queuev2.AcceptLeased)
// and of its workflow id: one minted for this call, or the one the entry
// kept through a put-back.
func acceptLeased(fe queuev2.FencedQueueEntry, owner string, sent []string, kept string) error {
	if err := queuev2.AcceptLeased(fe, owner); err != nil {
		return err
	}
	return queuev2.CheckWorkflowID(fe, sent, kept)
}

// mutate sends one ticket mutation and returns its strictly decoded answer.
func (d *daemon07) mutate(method string, params map[string]any) queuev2.MutationResponse {
	d.p.t.Helper()
	var m queuev2.MutationResponse
	d.p.result07(method, params, &m, true)
	return m
}

// renew is the heartbeat: applied with a valid transition, or the test
// fails as the daemon's renewal would.
func (d *daemon07) renew(f queuev2.ExecutionFence) queuev2.ExecutionFence {
	d.p.t.Helper()
	got, err := queuev2.AcceptRenew(d.mutate("queue/v2/lease/renew", map[string]any{"execution": f}), f)
	if err != nil {
		d.p.t.Fatalf("renew %s: %v", f.Key(), err)
	}
	return got
}

// recoverTicket moves f to this daemon (§4.4).
func (d *daemon07) recoverTicket(f queuev2.ExecutionFence) queuev2.ExecutionFence {
	d.p.t.Helper()
	got, err := queuev2.AcceptRecover(d.mutate("queue/v2/lease/recover", map[string]any{"execution": f, "new_owner_id": d.owner}), f, d.owner)
	if err != nil {
		d.p.t.Fatalf("recover %s: %v", f.Key(), err)
	}
	return got
}

func (d *daemon07) complete(f queuev2.ExecutionFence, status string) queuev2.MutationResponse {
	d.p.t.Helper()
	return d.mutate("queue/v2/completion", map[string]any{"execution": f, "status": status, "workflow_ref": "standard"})
}

func (d *daemon07) releasePending(f queuev2.ExecutionFence, reason string) queuev2.MutationResponse {
	d.p.t.Helper()
	return d.mutate("queue/v2/release_pending", map[string]any{"execution": f, "reason": reason})
}

// expect fails the test unless m has the outcome (and, when reason is not
// "", a reason containing it).
func expect(t *testing.T, what string, m queuev2.MutationResponse, outcome, reason string) {
	t.Helper()
	if m.Outcome != outcome || !strings.Contains(m.ReasonText(), reason) {
		t.Errorf("%s: %s %q, want %s %q", what, m.Outcome, m.ReasonText(), outcome, reason)
	}
}

// The CLI's old-style traffic (§4.6) and the reconcilers' (§4.5).

type queueStats struct {
	Assigned int `json:"assigned"`
	Deferred int `json:"deferred"`
	Held     int `json:"held"`
	Pending  int `json:"pending"`
	Total    int `json:"total"`
}

type listResult struct {
	Entries []queuev2.QueueEntry `json:"entries"`
	Stats   queueStats           `json:"stats"`
	Total   int                  `json:"total"`
}

func (p *project) list07(statuses ...string) listResult {
	p.t.Helper()
	params := map[string]any{}
	if len(statuses) > 0 {
		params["status"] = statuses
	}
	var r listResult
	p.result07("queue/list", params, &r, false)
	return r
}

func (p *project) stats07() queueStats {
	p.t.Helper()
	var s queueStats
	p.result07("queue/stats", map[string]any{}, &s, false)
	return s
}

// cliBySubject is `animus queue hold|release|drop <subject>`: list with the
// command's status filter, match the stored subject_id exactly or with its
// `<kind>:` prefix stripped, then one call per matching entry. It returns
// the entry ids it acted on.
func (p *project) cliBySubject(method, subject string) []string {
	p.t.Helper()
	filter := map[string][]string{"queue/hold": {"pending"}, "queue/release": {"held"},
		"queue/drop": {"pending", "held", "assigned"}}[method]
	var ids []string
	for _, e := range p.list07(filter...).Entries {
		_, bare, _ := strings.Cut(e.SubjectID, ":")
		if e.SubjectID == subject || bare == subject {
			var r struct {
				Changed bool `json:"changed"`
			}
			p.result07(method, map[string]any{"entry_id": e.EntryID}, &r, false)
			if !r.Changed {
				p.t.Errorf("%s %s (%s): not changed", method, subject, e.EntryID)
			}
			ids = append(ids, e.EntryID)
		}
	}
	return ids
}

// cliReorder is `animus queue reorder <subject>`: list pending and held,
// exact subject_id match only, one queue/reorder. It returns
// reordered_count.
func (p *project) cliReorder(subject string) int {
	p.t.Helper()
	var entryIDs []string
	for _, e := range p.list07("pending", "held").Entries {
		if e.SubjectID == subject {
			entryIDs = append(entryIDs, e.EntryID)
		}
	}
	var r struct {
		ReorderedCount int `json:"reordered_count"`
	}
	p.result07("queue/reorder", map[string]any{"entry_ids": entryIDs}, &r, false)
	return r.ReorderedCount
}

// reconcileCompletion is the old-style reconciler: list assigned, match on
// subject id and workflow_ref, old-style completion per match. It returns
// how many entries it completed.
func (p *project) reconcileCompletion(subject, status string) int {
	p.t.Helper()
	n := 0
	for _, e := range p.list07("assigned").Entries {
		if e.SubjectID != subject || e.WorkflowRef() != "standard" {
			continue
		}
		var r struct {
			Changed  bool `json:"changed"`
			NotFound bool `json:"not_found"`
		}
		p.result07("queue/completion", map[string]any{"entry_id": e.EntryID, "status": status, "workflow_ref": "standard"}, &r, false)
		if r.Changed {
			n++
		}
	}
	return n
}

// ids returns the fences' entry ids, sorted, for messages and comparisons.
func ids(fs []queuev2.ExecutionFence) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.EntryID()
	}
	slices.Sort(out)
	return out
}
