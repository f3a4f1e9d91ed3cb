package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// The queue-v2 suite's harness. A scenario is a Go function over a qv2:
// every call is one process of the 0.7 daemon's per-call model against the
// scenario's project, and every helper that expects something fails the
// scenario (by panicking with qv2Failure, recovered in v2) so a scenario
// reads as the life cycle it checks.

// EnvLeaseTTL is the queue's opt-in lease length (§6.18): 1..=604800
// seconds, 1800 otherwise.
const EnvLeaseTTL = "ANIMUS_QUEUE_LEASE_TTL_SECS"

// queue07Handshake is the 0.7 queue client's initialize (§4.1): protocol
// 1.1.0, host animus 0.7.0-rc.52, project_binding and the memory MCP
// command, keys sorted.
var queue07Handshake = fakehost.Daemon07.Handshake("queue")

type M = map[string]any

type qv2Failure struct{ msg string }

type qv2 struct {
	ctx  context.Context
	p    *queueProject
	note string // a Pass reason: what could not be checked from outside
}

var qv2Seq atomic.Int64

// uniq returns a fresh owner or workflow id: the daemon mints UUIDs.
func uniq(prefix string) string { return fmt.Sprintf("%s-%d", prefix, qv2Seq.Add(1)) }

// v2 turns a scenario body into a scenario function with a fresh project.
func v2(body func(q *qv2)) func(context.Context, *Session) Outcome {
	return func(ctx context.Context, s *Session) (out Outcome) {
		p, err := newQueueProject(s)
		if err != nil {
			return failf("%v", err)
		}
		p.hs = queue07Handshake
		q := &qv2{ctx: ctx, p: p}
		if err := q.catch(func() { body(q) }); err != nil {
			return failf("%v", err)
		}
		return Outcome{Status: Pass, Reason: q.note}
	}
}

func (q *qv2) failf(format string, args ...any) {
	panic(qv2Failure{fmt.Sprintf(format, args...)})
}

// catch runs f and returns its failure as an error; concurrency scenarios
// call it in every goroutine.
func (q *qv2) catch(f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			fail, ok := v.(qv2Failure)
			if !ok {
				panic(v)
			}
			err = fmt.Errorf("%s", fail.msg)
		}
	}()
	f()
	return nil
}

// fresh returns a view of a new, empty project.
func (q *qv2) fresh() *qv2 {
	p, err := newQueueProject(q.p.s)
	if err != nil {
		q.failf("%v", err)
	}
	p.hs = q.p.hs
	return &qv2{ctx: q.ctx, p: p}
}

// ttl returns a view of the same project whose processes get
// ANIMUS_QUEUE_LEASE_TTL_SECS=secs ("" = unset).
func (q *qv2) ttl(secs string) *qv2 {
	p := *q.p
	p.env = map[string]string{EnvLeaseTTL: secs}
	return &qv2{ctx: q.ctx, p: &p}
}

func encodeParams(params any) string {
	switch v := params.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, _ := json.Marshal(params)
	return string(b)
}

// rpc is one call in its own process; transport and gate failures fail the
// scenario, RPC errors come back in the response.
func (q *qv2) rpc(method string, params any) *fakehost.Response {
	resp, err := q.p.call(q.ctx, method, encodeParams(params))
	if err != nil {
		q.failf("%s %s: %v", method, clip([]byte(encodeParams(params))), err)
	}
	return resp
}

// result is rpc that must succeed, decoded into v (when non-nil): a v2
// result strictly, as the daemon decodes it.
func (q *qv2) result(method string, params any, v any) json.RawMessage {
	resp := q.rpc(method, params)
	err := wantResult(resp, nil)
	if err == nil && v != nil {
		if strings.HasPrefix(method, "queue/v2/") {
			err = queuev2.DecodeStrict(resp.Result, v)
		} else {
			err = json.Unmarshal(resp.Result, v)
		}
	}
	if err != nil {
		q.failf("%s %s: %v", method, clip([]byte(encodeParams(params))), err)
	}
	return resp.Result
}

// rpcErr expects a JSON-RPC error with code whose message contains sub.
func (q *qv2) rpcErr(method string, params any, code int, sub string) {
	resp := q.rpc(method, params)
	if err := wantError(resp, code, ""); err != nil {
		q.failf("%s %s: %v", method, clip([]byte(encodeParams(params))), err)
	}
	if !strings.Contains(resp.Error.Message, sub) {
		q.failf("%s: error message %q lacks %q", method, resp.Error.Message, sub)
	}
}

// dispatch07 is a 0.7 SubjectDispatch for a task id, or for a SubjectRef
// given as JSON.
func dispatch07(subject string) M {
	var ref any = M{"Task": M{"id": subject}}
	if strings.HasPrefix(subject, "{") {
		ref = json.RawMessage(subject)
	}
	return M{"requested_at": "2026-10-01T12:00:00Z", "subject": ref, "trigger_source": "manual-queue-enqueue", "workflow_ref": "standard"}
}

// enqReq is a queue/v2/enqueue request; mods edit it (key, repo, …).
func enqReq(subject string, mods ...func(M)) M {
	r := M{"subject_dispatch": dispatch07(subject)}
	for _, m := range mods {
		m(r)
	}
	return r
}

func withKey(k string) func(M) { return func(r M) { r["idempotency_key"] = k } }

func withRepo(repo, base, head string) func(M) {
	return func(r M) { r["repository"] = M{"repository": repo, "base_ref": base, "head_ref": head} }
}

func withField(k string, v any) func(M) { return func(r M) { r[k] = v } }

func withDispatch(k string, v any) func(M) {
	return func(r M) { r["subject_dispatch"].(M)[k] = v }
}

func (q *qv2) enqueue(req M) queuev2.EnqueueResponse {
	var r queuev2.EnqueueResponse
	q.result("queue/v2/enqueue", req, &r)
	return r
}

// enqueueNew expects a new entry with this subject generation, no warning.
func (q *qv2) enqueueNew(req M, qid string, gen uint64) queuev2.EnqueueResponse {
	r := q.enqueue(req)
	if !r.Enqueued || r.EntryID == "" || r.Subject != (queuev2.SubjectGeneration{QualifiedID: qid, Generation: gen}) || r.Warning != nil {
		q.failf("enqueue %s: got %+v, want a new entry of %s generation %d without warning", encodeParams(req), r, qid, gen)
	}
	return r
}

// enqueueSame expects enqueued:false with the entry and subject of want and
// the warning ("" = none).
func (q *qv2) enqueueSame(req M, want queuev2.EnqueueResponse, warning string) {
	r := q.enqueue(req)
	got := ""
	if r.Warning != nil {
		got = *r.Warning
	}
	if r.Enqueued || r.EntryID != want.EntryID || r.Subject != want.Subject || got != warning {
		q.failf("enqueue %s: got %+v (warning %q), want enqueued:false, entry %s, %+v, warning %q",
			encodeParams(req), r, got, want.EntryID, want.Subject, warning)
	}
}

func activeWarning(qid string) string {
	return "subject " + qid + " already has an active generation; enqueue rejected"
}

const boundElsewhere = "already bound to a different queue request"

// leaseReq is the daemon's lease: max = number of fresh workflow ids.
func leaseReq(owner string, wfIDs ...string) M {
	if wfIDs == nil {
		wfIDs = []string{} // the daemon sends [], never null
	}
	return M{"max": len(wfIDs), "owner_id": owner, "workflow_ids": wfIDs}
}

// lease leases and checks every hand-out as the dispatch tick does.
func (q *qv2) lease(req M) queuev2.LeaseResponse {
	var r queuev2.LeaseResponse
	raw := q.result("queue/v2/lease", req, &r)
	if r.Leased == nil {
		q.failf("lease result %s has no leased array", clip(raw))
	}
	for _, fe := range r.Leased {
		if err := queuev2.AcceptLeased(fe, req["owner_id"].(string)); err != nil {
			q.failf("lease %s: %v", encodeParams(req), err)
		}
	}
	return r
}

// leaseOne leases exactly the entry id (one fresh workflow id) and
// returns its fence.
func (q *qv2) leaseOne(owner, entryID string) queuev2.ExecutionFence {
	r := q.lease(leaseReq(owner, uniq("wf")))
	if len(r.Leased) != 1 || r.Leased[0].Entry.EntryID != entryID {
		var got []string
		for _, fe := range r.Leased {
			got = append(got, fe.Execution.String())
		}
		q.failf("lease by %s: leased %v, blocked %+v; want entry %s", owner, got, r.Blocked, entryID)
	}
	return r.Leased[0].Execution
}

// expect sends a ticket mutation and checks outcome and reason ("" = any;
// "-" = absent).
func (q *qv2) expect(method string, req M, outcome, reason string) queuev2.MutationResponse {
	var r queuev2.MutationResponse
	q.result(method, req, &r)
	got := ""
	if r.Reason != nil {
		got = *r.Reason
	}
	if r.Outcome != outcome || (reason == "-" && r.Reason != nil) || (reason != "" && reason != "-" && got != reason) {
		q.failf("%s: got outcome %q reason %q, want %q %q", method, r.Outcome, got, outcome, reason)
	}
	return r
}

func renew(f queuev2.ExecutionFence) M { return M{"execution": f} }

func recoverReq(f queuev2.ExecutionFence, owner string) M {
	return M{"execution": f, "new_owner_id": owner}
}

func complete(f queuev2.ExecutionFence, status string) M {
	return M{"execution": f, "status": status, "workflow_ref": "standard"}
}

func putBack(f queuev2.ExecutionFence, reason string) M { return M{"execution": f, "reason": reason} }

func (q *qv2) list(params string) queueList {
	var l queueList
	q.result("queue/list", params, &l)
	return l
}

// listed returns the live entries by id.
func (q *qv2) listed() map[string]queueEntry {
	out := map[string]queueEntry{}
	for _, e := range q.list(`{"limit":2000}`).Entries {
		out[e.EntryID] = e
	}
	return out
}

func (q *qv2) stats(want string) {
	raw := q.result("queue/stats", M{}, nil)
	if err := jsonEqual(raw, want); err != nil {
		q.failf("stats: %v", err)
	}
}

// status checks one entry's listed status ("" = not listed).
func (q *qv2) status(entryID, want string) queueEntry {
	e, ok := q.listed()[entryID]
	if e.Status != want || ok != (want != "") {
		q.failf("entry %s is %q, want %q", entryID, e.Status, want)
	}
	return e
}

// waitPast sleeps until the fence's expiry has passed.
func waitPast(f queuev2.ExecutionFence) {
	if d := time.Until(f.Expiry()); d > -50*time.Millisecond {
		time.Sleep(d + 100*time.Millisecond)
	}
}

// expiryNear checks an expiry against now + ttl within slack (process
// start-up and clock reads on both sides).
func expiryNear(f queuev2.ExecutionFence, from time.Time, ttl time.Duration) error {
	got := f.Expiry()
	lo, hi := from.Add(ttl-2*time.Second), time.Now().Add(ttl+2*time.Second)
	if got.Before(lo) || got.After(hi) {
		return fmt.Errorf("expires_at %s, want about now + %v", f.QueueLease.ExpiresAt, ttl)
	}
	return nil
}
