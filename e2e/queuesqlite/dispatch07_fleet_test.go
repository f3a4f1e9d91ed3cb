package queuesqlite

import (
	"slices"
	"strings"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// localFleet is the 0.7 daemon's local lease projection (queue-v2.md
// §4.2): the fences it tracks, which of them use a coding slot (only live
// ones), and the local scheduler's collision rules, which normalise
// repositories more aggressively than the queue's protocol key (§3.9). That
// difference is what makes the queue hand out an entry the scheduler then
// rejects.
type localFleet struct {
	capacity int
	tracked  map[string]queuev2.ExecutionFence // entry id → the fence the daemon stores
	// putBack remembers the workflow id an entry had when the daemon put it
	// back: the next hand-out must keep it (§3.5 step d).
	putBack map[string]string
}

func newLocalFleet() *localFleet {
	return &localFleet{capacity: 5, tracked: map[string]queuev2.ExecutionFence{}, putBack: map[string]string{}}
}

// fences is the lease call's exclude list: every tracked fence, expired
// ones included.
func (l *localFleet) fences() []queuev2.ExecutionFence {
	out := make([]queuev2.ExecutionFence, 0, len(l.tracked))
	for _, f := range l.tracked {
		out = append(out, f)
	}
	return out
}

// batch is the tick's max: min(available slots, 5); only live leases use
// a slot.
func (l *localFleet) batch(now time.Time) int {
	used := 0
	for _, f := range l.tracked {
		if f.Expiry().After(now) {
			used++
		}
	}
	return min(l.capacity-used, 5)
}

// normalRepo is the daemon's local normalisation: scheme, host and ".git"
// do not make two remotes different.
func normalRepo(r string) string {
	r = strings.ToLower(strings.TrimSpace(r))
	if _, rest, ok := strings.Cut(r, "://"); ok {
		r = rest
	}
	r = strings.TrimPrefix(r, "github.com/")
	return strings.TrimSuffix(r, ".git")
}

// conflict is the local scheduler's verdict on a leased fence: "" admits
// it; otherwise the rule it breaks.
func (l *localFleet) conflict(f queuev2.ExecutionFence) string {
	for _, o := range l.tracked {
		switch {
		case o.EntryID() == f.EntryID() || o.WorkflowID == f.WorkflowID:
			return "same entry or workflow"
		case o.Subject.QualifiedID == f.Subject.QualifiedID:
			return "same task active"
		case o.Repository != nil && f.Repository != nil && o.Repository.HeadRef == f.Repository.HeadRef &&
			normalRepo(o.Repository.Repository) == normalRepo(f.Repository.Repository):
			return "same repository/head ref"
		}
	}
	return ""
}

// tickOutcome is what one dispatch tick did with each leased entry.
type tickOutcome struct {
	max      int
	started  []queuev2.ExecutionFence
	rejected []queuev2.ExecutionFence // local-fleet-collision
	deferred []queuev2.ExecutionFence // spawn-deferred
	blocked  []queuev2.LeaseBlock
}

// tick is one dispatch_queued_entries_via_runner: lease, admit each item
// locally or put it back, spawn. deferSpawn names the qualified subjects
// whose spawn is deferred this tick.
func (d *daemon07) tick(l *localFleet, deferSpawn ...string) tickOutcome {
	t := d.p.t
	t.Helper()
	out := tickOutcome{max: l.batch(time.Now())}
	if out.max <= 0 {
		return out
	}
	r, _ := d.lease(out.max, l.fences(), l.putBack)
	out.blocked = r.Blocked
	for _, fe := range r.Leased {
		f := fe.Execution
		delete(l.putBack, f.EntryID())
		reason := ""
		switch {
		case l.conflict(f) != "":
			reason = "local-fleet-collision"
			out.rejected = append(out.rejected, f)
		case slices.Contains(deferSpawn, f.Subject.QualifiedID):
			reason = "spawn-deferred"
			out.deferred = append(out.deferred, f)
		default:
			l.tracked[f.EntryID()] = f
			out.started = append(out.started, f)
			continue
		}
		// applied/already_applied drops the local reservation; anything
		// else would leave it, which this script never expects.
		m := d.releasePending(f, reason)
		expect(t, "release_pending "+reason+" "+f.Subject.QualifiedID, m, "applied", "")
		if m.Execution != nil {
			t.Errorf("release_pending applied with an execution %+v; §3.7 says none", *m.Execution)
		}
		l.putBack[f.EntryID()] = f.WorkflowID
	}
	return out
}

// heartbeat renews every live tracked ticket, as the ready-dispatch step
// does, and stores the renewed fences.
func (d *daemon07) heartbeat(l *localFleet) {
	for id, f := range l.tracked {
		if f.QueueLease.OwnerID == d.owner && f.Expiry().After(time.Now()) {
			l.tracked[id] = d.renew(f)
		}
	}
}

// finish completes a tracked run with its stored ticket and drops the local
// record on applied/already_applied (§4.5).
func (d *daemon07) finish(l *localFleet, f queuev2.ExecutionFence, status, want string) {
	d.p.t.Helper()
	m := d.complete(f, status)
	expect(d.p.t, "completion "+status+" "+f.Subject.QualifiedID, m, want, "")
	if m.Execution == nil || m.Execution.Key() != f.Key() {
		d.p.t.Errorf("completion %s: execution %+v, want the fence as it was (%s)", f.Subject.QualifiedID, m.Execution, f.Key())
	}
	delete(l.tracked, f.EntryID())
}
