package conformance

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
	"github.com/animus-plugins/animus-plugins/e2e/schemacheck"
)

// QueueV2Suite is the suite of generation-fenced leases (kind key
// "queue-v2"): every conformance scenario of queue-v2.md §5.4 and the
// daemon-rule contract test, run the way the Animus 0.7 daemon and CLI run
// a queue — a fresh process per call with the 0.7 queue client's
// handshake, the gate before every queue/v2/* call, every v2 result
// validated against the 0.4.0 schemas and every fence against the rules
// the daemon applies to it. The runner adds it for a queue whose
// initialize passes the gate; `--kind queue-v2` selects it by name.
func QueueV2Suite() []Scenario {
	return []Scenario{
		{"queue-v2", "01-gate-and-manifest", scenarioV2Gate},
		{"queue-v2", "02-strict-types", v2(scenarioV2Strict)},
		{"queue-v2", "03-enqueue-generations", v2(scenarioV2EnqueueGenerations)},
		{"queue-v2", "04-idempotency-key", v2(scenarioV2IdempotencyKey)},
		{"queue-v2", "05-key-replay-after-finish", v2(scenarioV2KeyAfterFinish)},
		{"queue-v2", "06-live-subject-returns-entry", v2(scenarioV2LiveSubject)},
		{"queue-v2", "07-generation-after-finish-and-old-style", v2(scenarioV2NextGeneration)},
		{"queue-v2", "08-enqueue-errors-write-nothing", v2(scenarioV2EnqueueErrors)},
		{"queue-v2", "09-canonical-ids-repository-run-at", v2(scenarioV2CanonicalIDs)},
		{"queue-v2", "10a-lease-full-fence", v2(scenarioV2LeaseFence)},
		{"queue-v2", "10b-lease-ttl-setting", v2(scenarioV2LeaseTTL)},
		{"queue-v2", "10c-lease-batch-and-errors", v2(scenarioV2LeaseErrors)},
		{"queue-v2", "11-lease-skips-and-subject-blocks", v2(scenarioV2LeaseSkips)},
		{"queue-v2", "12-repository-collisions", v2(scenarioV2Collisions)},
		{"queue-v2", "13-identity-at-hand-out", v2(scenarioV2Identity)},
		{"queue-v2", "14-renew", v2(scenarioV2Renew)},
		{"queue-v2", "15-recover", v2(scenarioV2Recover)},
		{"queue-v2", "16-fence-matching", v2(scenarioV2FenceMatching)},
		{"queue-v2", "17-completion-and-finished-answers", v2(scenarioV2Completion)},
		{"queue-v2", "18-expired-ticket-finishes", v2(scenarioV2ExpiredFinishes)},
		{"queue-v2", "19-release-pending", v2(scenarioV2PutBack)},
		{"queue-v2", "20-forged-fence-and-invalid-requests", v2(scenarioV2Forged)},
		{"queue-v2", "21a-old-style-beside-v2", v2(scenarioV2OldStyle)},
		{"queue-v2", "21b-list-paging", v2(scenarioV2ListPaging)},
		{"queue-v2", "22-concurrent-lease-processes", v2(scenarioV2ConcurrentLease)},
		{"queue-v2", "23-concurrent-enqueue-processes", v2(scenarioV2ConcurrentEnqueue)},
		{"queue-v2", "24-races", v2(scenarioV2Races)},
		{"queue-v2", "25-sigkill-mid-call", v2(scenarioV2KillMidCall)},
		{"queue-v2", "26-lost-replies", v2(scenarioV2LostReplies)},
		{"queue-v2", "27-durability", v2(scenarioV2Durability)},
		{"queue-v2", "28-ttl-lowered-between-renews", v2(scenarioV2TTLLowered)},
		{"queue-v2", "contract-daemon-rules", v2(scenarioV2Contract)},
	}
}

// scenarioV2Gate (§5.4 1): the 0.7 queue client's initialize passes the
// gate; crate 0.4.0; extra is a QueueCapabilities; the 0.7 generic
// handshake is accepted too; the manifest lists the six methods and
// declares the lease TTL as optional, not sensitive.
func scenarioV2Gate(ctx context.Context, s *Session) Outcome {
	p, err := newQueueProject(s)
	if err != nil {
		return failf("%v", err)
	}
	p.hs = queue07Handshake
	_, res, err := p.spawn(ctx)
	if err != nil {
		return failf("%v", err)
	}
	if _, err := RequireGenerationFencedQueue(res); err != nil {
		return failf("%v", err)
	}
	kc := res.KindCapabilities["queue"]
	if kc.CrateVersion != "0.4.0" || res.PluginInfo.PluginKind != "queue" {
		return failf("kind_capabilities.queue.crate_version %q, plugin_kind %q; want 0.4.0 and queue", kc.CrateVersion, res.PluginInfo.PluginKind)
	}
	if err := s.Schemas.Validate(schemacheck.QueueProtocol, "QueueCapabilities", kc.Extra); err != nil {
		return failf("kind_capabilities.queue.extra: %v", err)
	}
	var extra map[string]json.RawMessage
	_ = json.Unmarshal(kc.Extra, &extra)
	for _, k := range []string{"generation_fenced_leases_v1", "max_lease_batch", "priority_weighted"} {
		if _, ok := extra[k]; !ok {
			return failf("kind_capabilities.queue.extra %s lacks %s (the references always emit it)", kc.Extra, k)
		}
	}
	// The 0.7 generic host (health probes, plugin tooling) announces 1.2.0
	// as plugin-host 0.1.0 without a binding: never refused (§6.1).
	generic := fakehost.Handshake{Preset: fakehost.PresetDaemon, ProtocolVersion: "1.2.0", HostVersion: "0.1.0"}
	if _, _, err := s.SpawnReady(ctx, generic, func(c *fakehost.Config) { c.Dir = p.dir }); err != nil {
		return failf("the 0.7 generic handshake (1.2.0, host 0.1.0) was refused: %v", err)
	}
	if s.Manifest == nil {
		return failf("no manifest")
	}
	for _, m := range QueueV2Methods {
		if !contains(s.Manifest.Capabilities, m) {
			return failf("manifest capabilities lack %s", m)
		}
	}
	for _, e := range s.Manifest.EnvRequired {
		if e.Name == EnvLeaseTTL {
			if e.Required || e.Sensitive {
				return failf("manifest declares %s required=%v sensitive=%v, want both false", EnvLeaseTTL, e.Required, e.Sensitive)
			}
			return pass()
		}
	}
	return failf("manifest env_required does not declare %s: the host would never forward it", EnvLeaseTTL)
}

// scenarioV2Strict (§5.4 2): unknown keys at the top and inside every
// fence object, and null in required fields, are -32602 naming the field
// and change nothing; an unknown key inside subject_dispatch is accepted
// and not stored.
func scenarioV2Strict(q *qv2) {
	a := q.enqueueNew(enqReq("TASK-1", withDispatch("surprise_dispatch_key", true)), "task:TASK-1", 1)
	if e := q.status(a.EntryID, "pending"); strings.Contains(string(e.SubjectDispatch), "surprise_dispatch_key") {
		q.failf("unknown subject_dispatch key was stored: %s", e.SubjectDispatch)
	}
	q.rpcErr("queue/v2/enqueue", enqReq("TASK-2", withField("surprise", 1)), -32602, "surprise")
	q.rpcErr("queue/v2/enqueue", enqReq("TASK-2", withField("repository", M{"repository": "acme/app", "base_ref": "refs/heads/main",
		"head_ref": "refs/heads/x", "surprise_repo": 1})), -32602, "surprise_repo")
	q.rpcErr("queue/v2/enqueue", M{"subject_dispatch": nil}, -32602, "")
	q.rpcErr("queue/v2/enqueue", nil, -32602, "")

	owner := uniq("owner")
	req := leaseReq(owner, uniq("wf"))
	req["surprise"] = true
	q.rpcErr("queue/v2/lease", req, -32602, "surprise")
	q.rpcErr("queue/v2/lease", M{"max": 1, "owner_id": nil, "workflow_ids": []string{"w"}}, -32602, "")
	f := q.leaseOne(owner, a.EntryID)

	// The same live fence, each time with one stray key somewhere inside.
	nested := []struct{ where, key string }{
		{"", "surprise_top"}, {"execution", "surprise_execution"}, {"queue_lease", "surprise_lease"},
		{"subject", "surprise_subject"},
	}
	for _, n := range nested {
		doc := fenceDoc(f)
		switch n.where {
		case "":
			q.rpcErr("queue/v2/lease/renew", M{"execution": doc, n.key: 1}, -32602, n.key)
			continue
		case "execution":
			doc[n.key] = 1
		default:
			doc[n.where].(map[string]any)[n.key] = 1
		}
		q.rpcErr("queue/v2/lease/renew", M{"execution": doc}, -32602, n.key)
		excl := leaseReq(owner, uniq("wf"))
		excl["exclude"] = []any{doc}
		q.rpcErr("queue/v2/lease", excl, -32602, n.key)
	}
	doc := fenceDoc(f)
	doc["repository"] = M{"repository": "acme/app", "base_ref": "refs/heads/main", "head_ref": "refs/heads/x", "surprise_repo": 1}
	q.rpcErr("queue/v2/lease/renew", M{"execution": doc}, -32602, "surprise_repo")
	doc = fenceDoc(f)
	doc["queue_lease"].(map[string]any)["owner_id"] = nil
	q.rpcErr("queue/v2/completion", M{"execution": doc, "status": "completed"}, -32602, "")
	q.rpcErr("queue/v2/lease/renew", M{"execution": nil}, -32602, "")
	q.rpcErr("queue/v2/release_pending", M{"execution": f, "reason": nil}, -32602, "")
	q.rpcErr("queue/v2/lease/recover", M{"execution": f, "new_owner_id": "x", "surprise": 1}, -32602, "surprise")

	// Nothing above changed the ticket.
	r := q.expect("queue/v2/lease/renew", renew(f), "applied", "")
	if _, err := queuev2.AcceptRenew(r, f); err != nil {
		q.failf("%v", err)
	}
}

// fenceDoc is a fence as a generic object a scenario can plant keys in.
func fenceDoc(f queuev2.ExecutionFence) map[string]any {
	var doc map[string]any
	b, _ := json.Marshal(f)
	_ = json.Unmarshal(b, &doc)
	return doc
}
