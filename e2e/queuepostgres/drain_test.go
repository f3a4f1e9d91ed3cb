package queuepostgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
	"github.com/animus-plugins/animus-plugins/pkg/pgkit/pgtest"
)

// uncertainLease is a queue/v2/lease that answered -32205: it may have
// committed (the commit's answer was lost), so the entries it assigned, if
// any, carry one of its workflow ids and only recovery brings them back.
type uncertainLease struct {
	owner string
	at    time.Time // when the error answer arrived: any lease it made expires by at + TTL
}

// ledger is what the daemons together learned from the queue's answers.
type ledger struct {
	mu        sync.Mutex
	subjects  map[string]queuev2.SubjectGeneration // entry id → subject (enqueue)
	tickets   map[string][]queuev2.ExecutionFence  // entry id → every ticket a lease answer carried
	recovered map[string]queuev2.ExecutionFence    // entry id → ticket recovered after a lost lease answer
	completed map[string]int                       // entry id → completions that took effect
	uncertain map[string]uncertainLease            // workflow id → the failed lease that sent it
	retries   map[string]int                       // method → -32205 answers
	samples   map[string]string                    // method → one -32205 message
	calls     atomic.Int64                         // drain calls made
	done      atomic.Int64                         // entries completed
}

func newLedger(subjects map[string]queuev2.SubjectGeneration) *ledger {
	return &ledger{subjects: subjects, tickets: map[string][]queuev2.ExecutionFence{},
		recovered: map[string]queuev2.ExecutionFence{}, completed: map[string]int{},
		uncertain: map[string]uncertainLease{}, retries: map[string]int{}, samples: map[string]string{}}
}

func (l *ledger) retried(method string, e *fakehost.RPCError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.retries[method]++
	if _, ok := l.samples[method]; !ok {
		l.samples[method] = e.Message
	}
}

// handOut records the tickets of one lease answer; an entry handed out
// before is the failure this whole file looks for.
func (l *ledger) handOut(fs []queuev2.FencedQueueEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, fe := range fs {
		id := fe.Execution.EntryID()
		if prev := l.tickets[id]; len(prev) > 0 {
			errs = append(errs, fmt.Errorf("entry %s handed out twice: %s, then %s", id, prev[0].Key(), fe.Execution.Key()))
		}
		if _, ok := l.subjects[id]; !ok {
			errs = append(errs, fmt.Errorf("entry %s was handed out but never enqueued here", id))
		}
		l.tickets[id] = append(l.tickets[id], fe.Execution)
	}
	return errors.Join(errs...)
}

func (l *ledger) complete(id string) {
	l.mu.Lock()
	l.completed[id]++
	l.mu.Unlock()
	l.done.Add(1)
}

// hostsRetryPause is how long a daemon waits after -32205 before the next call.
const hostsRetryPause = 150 * time.Millisecond

// drainOptions shape one multi-host drain.
type drainOptions struct {
	// retriable: -32205 answers are expected (a fault is injected) and
	// retried; otherwise any error answer fails the drain.
	retriable bool
	// deadline bounds the whole drain.
	deadline time.Duration
}

// drain runs every host's dispatch loop concurrently until each got an
// empty lease: lease (max 1–5, per call), then complete every ticket (per
// call). It returns every failure, joined.
func drainHosts(ctx context.Context, hosts []*daemonHost, l *ledger, o drainOptions) error {
	ctx, cancel := context.WithTimeout(ctx, o.deadline)
	defer cancel()
	return hostsFanOut(len(hosts), len(hosts), func(w int) error {
		return hosts[w].loop(ctx, w, l, o)
	})
}

func (d *daemonHost) loop(ctx context.Context, w int, l *ledger, o drainOptions) error {
	for round := 0; ; round++ {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: drain unfinished after %d rounds: %w", d.name, round, ctx.Err())
		}
		max := 1 + (round+w)%5
		params, wfs := v2LeaseParams(d.owner, max)
		var r queuev2.LeaseResponse
		l.calls.Add(1)
		rpcErr, trans, err := d.f.strict(ctx, d.dir, "queue/v2/lease", params, &r)
		switch {
		case err != nil:
			return fmt.Errorf("%s round %d: %w", d.name, round, err)
		case rpcErr != nil && rpcErr.Code == codeRetry && o.retriable:
			// The lease may have committed with its answer lost: remember
			// the workflow ids it sent, then lease again.
			l.mu.Lock()
			for _, wf := range wfs {
				l.uncertain[wf] = uncertainLease{owner: d.owner, at: time.Now()}
			}
			l.mu.Unlock()
			l.retried("queue/v2/lease", rpcErr)
			pause(ctx, hostsRetryPause)
			continue
		case rpcErr != nil:
			return fmt.Errorf("%s round %d: queue/v2/lease: error %d %s\n%s", d.name, round, rpcErr.Code, rpcErr.Message, trans())
		}
		if r.Leased == nil || len(r.Blocked) > 0 {
			return fmt.Errorf("%s round %d: lease answer %+v: no leased array, or blocked with distinct subjects and no excludes\n%s",
				d.name, round, r, trans())
		}
		if len(r.Leased) == 0 {
			return nil
		}
		if len(r.Leased) > max {
			return fmt.Errorf("%s: %d leased for max %d", d.name, len(r.Leased), max)
		}
		for _, fe := range r.Leased {
			if err := queuev2.AcceptLeased(fe, d.owner); err != nil {
				return fmt.Errorf("%s: the daemon would strand %s: %w\n%s", d.name, fe.Execution.EntryID(), err, trans())
			}
			if err := queuev2.CheckWorkflowID(fe, wfs, ""); err != nil {
				return fmt.Errorf("%s: %w", d.name, err)
			}
			if fe.Execution.QueueLease.Generation != 1 || fe.Execution.Subject == nil || fe.Execution.Subject.Generation != 1 {
				return fmt.Errorf("%s: first hand-out of %s at lease/subject generation %d/%v, want 1/1: handed out before?",
					d.name, fe.Execution.EntryID(), fe.Execution.QueueLease.Generation, fe.Execution.Subject)
			}
		}
		if err := l.handOut(r.Leased); err != nil {
			return fmt.Errorf("%s: %w\n%s", d.name, err, trans())
		}
		for _, fe := range r.Leased {
			if err := d.completeOnce(ctx, l, fe.Execution, o.retriable); err != nil {
				return err
			}
		}
	}
}

// completeOnce sends queue/v2/completion for f until it took effect:
// applied, or already_applied after an attempt whose answer was lost.
func (d *daemonHost) completeOnce(ctx context.Context, l *ledger, f queuev2.ExecutionFence, retriable bool) error {
	lost := false
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: completion of %s unfinished after %d attempts: %w", d.name, f.Key(), attempt, ctx.Err())
		}
		var m queuev2.MutationResponse
		l.calls.Add(1)
		rpcErr, trans, err := d.f.strict(ctx, d.dir, "queue/v2/completion",
			map[string]any{"execution": f, "status": "completed", "workflow_ref": "standard"}, &m)
		switch {
		case err != nil:
			return fmt.Errorf("%s: completion of %s: %w", d.name, f.Key(), err)
		case rpcErr != nil && rpcErr.Code == codeRetry && retriable:
			lost = true
			l.retried("queue/v2/completion", rpcErr)
			pause(ctx, hostsRetryPause)
			continue
		case rpcErr != nil:
			return fmt.Errorf("%s: completion of %s: error %d %s\n%s", d.name, f.Key(), rpcErr.Code, rpcErr.Message, trans())
		}
		ok := m.Outcome == "applied" || (lost && m.Outcome == "already_applied")
		if !ok || m.Execution == nil || m.Execution.Key() != f.Key() {
			return fmt.Errorf("%s: completion of %s (after a lost answer: %v): %s, want applied with the ticket\n%s",
				d.name, f.Key(), lost, m, trans())
		}
		l.complete(f.EntryID())
		return nil
	}
}

// v2LeaseParams are a dispatch tick's queue/v2/lease params: max fresh
// workflow ids (also returned), no exclude.
func v2LeaseParams(owner string, max int) (map[string]any, []string) {
	ids := make([]string, max)
	for i := range ids {
		ids[i] = queuev2.NewUUID()
	}
	return map[string]any{"max": max, "owner_id": owner, "workflow_ids": ids}, ids
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// assignedList is queue/list's answer as the reconciler reads it.
type assignedList struct {
	Entries []queuev2.QueueEntry `json:"entries"`
}

// hostsStats is queue/stats.
type hostsStats struct {
	Assigned int `json:"assigned"`
	Deferred int `json:"deferred"`
	Held     int `json:"held"`
	Pending  int `json:"pending"`
	Total    int `json:"total"`
}

// reconcile is a restarted daemon's way with leases whose answer was lost
// (queue-v2.md §5.4 item 26: such an entry stays assigned and is never
// handed out again, not even after expiry). The daemon knows what it sent:
// its owner id and the workflow ids of every lease that answered -32205.
// Each assigned entry must carry one of those workflow ids; its ticket is
// rebuilt (lease generation 1, as it was a first hand-out), and once the
// TTL has run out a new owner recovers it (generation 2) and completes it.
// It returns how many entries it recovered.
func reconcileLost(ctx context.Context, d *daemonHost, l *ledger, ttl time.Duration) (int, error) {
	var r assignedList
	if err := looseRetry(ctx, d, "queue/list", map[string]any{"status": []string{"assigned"}, "limit": 500}, &r); err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, e := range r.Entries {
		l.mu.Lock()
		handed := ""
		if ts := l.tickets[e.EntryID]; len(ts) > 0 {
			handed = ts[0].Key()
		}
		subject, known := l.subjects[e.EntryID]
		wf := ""
		if e.WorkflowID != nil {
			wf = *e.WorkflowID
		}
		u, lost := l.uncertain[wf]
		l.mu.Unlock()
		switch {
		case !known:
			errs = append(errs, fmt.Errorf("assigned entry %s was never enqueued here", e.EntryID))
			continue
		case handed != "":
			errs = append(errs, fmt.Errorf("entry %s is still assigned although its ticket %s was completed", e.EntryID, handed))
			continue
		case !lost:
			errs = append(errs, fmt.Errorf("entry %s is assigned with workflow id %q, which no lease that failed sent: "+
				"a hand-out no daemon can know of", e.EntryID, wf))
			continue
		}
		expires := u.at.Add(ttl)
		old := queuev2.ExecutionFence{Schema: queuev2.FenceSchema, Version: 1, WorkflowID: wf, WorkflowGeneration: 1,
			Subject: &subject, QueueLease: &queuev2.QueueLeaseFence{EntryID: e.EntryID, OwnerID: u.owner, Generation: 1,
				ExpiresAt: expires.UTC().Format(time.RFC3339Nano)}}
		pause(ctx, time.Until(expires.Add(300*time.Millisecond)))
		var m queuev2.MutationResponse
		for {
			rpcErr, trans, err := d.f.strict(ctx, d.dir, "queue/v2/lease/recover", map[string]any{"execution": old, "new_owner_id": d.owner}, &m)
			if err != nil {
				return n, err
			}
			if rpcErr != nil && rpcErr.Code == codeRetry && ctx.Err() == nil {
				pause(ctx, hostsRetryPause)
				continue
			}
			if rpcErr != nil {
				return n, fmt.Errorf("recover %s: error %d %s\n%s", old.Key(), rpcErr.Code, rpcErr.Message, trans())
			}
			if m.Outcome == "lease_still_live" && ctx.Err() == nil {
				pause(ctx, 200*time.Millisecond) // its lease was made a little later than we thought
				continue
			}
			break
		}
		got, err := queuev2.AcceptRecover(m, old, d.owner)
		if err != nil {
			errs = append(errs, fmt.Errorf("recover the lost lease of %s: %w", e.EntryID, err))
			continue
		}
		l.mu.Lock()
		l.recovered[e.EntryID] = got
		l.mu.Unlock()
		if err := d.completeOnce(ctx, l, got, true); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// looseRetry calls method and decodes the answer leniently (0.3.2 reads),
// retrying on -32205 (reads right after a fault) and failing on any other
// error answer.
func looseRetry(ctx context.Context, d *daemonHost, method string, params, v any) error {
	for {
		resp, trans, err := d.f.call(ctx, d.dir, method, params)
		if err != nil {
			return err
		}
		if resp.Error != nil && resp.Error.Code == codeRetry && ctx.Err() == nil {
			pause(ctx, hostsRetryPause)
			continue
		}
		if resp.Error != nil {
			return fmt.Errorf("%s: error %d %s\n%s", method, resp.Error.Code, resp.Error.Message, trans())
		}
		return json.Unmarshal(resp.Result, v)
	}
}

// verify is the end state every test here requires: each enqueued entry
// handed out by a lease at most once and completed exactly once, the
// queue empty (queue/stats), and in the database one finished record per
// entry (outcome completed), one queue/v2/lease audit row per entry and
// no live row.
func verifyDrained(t *testing.T, ctx context.Context, d *daemonHost, l *ledger, ids []string) {
	t.Helper()
	l.mu.Lock()
	bad := 0
	for _, id := range ids {
		_, rec := l.recovered[id]
		switch {
		case l.completed[id] != 1:
			bad++
			if bad <= 20 {
				t.Errorf("entry %s completed %d times, want exactly once (tickets %d, recovered %v)", id, l.completed[id], len(l.tickets[id]), rec)
			}
		case len(l.tickets[id]) > 1:
			bad++
			t.Errorf("entry %s handed out %d times", id, len(l.tickets[id]))
		case len(l.tickets[id]) == 0 && !rec:
			bad++
			t.Errorf("entry %s completed without a ticket", id)
		}
	}
	if len(l.completed) != len(ids) {
		t.Errorf("%d entries completed, %d enqueued", len(l.completed), len(ids))
	}
	l.mu.Unlock()
	if bad > 20 {
		t.Errorf("… %d entries wrong in all", bad)
	}

	var s hostsStats
	if err := looseRetry(ctx, d, "queue/stats", map[string]any{}, &s); err != nil {
		t.Error(err)
	} else if s != (hostsStats{}) {
		t.Errorf("queue/stats at the end: %+v, want an empty queue", s)
	}

	c := pgtest.Connect(t, d.f.q.DSN)
	schema := pgx.Identifier{d.f.q.Schema}.Sanitize()
	var live, finished, distinct int
	if err := c.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+schema+`.entries),
		(SELECT count(*) FROM `+schema+`.finished_entries WHERE outcome = 'completed'),
		(SELECT count(DISTINCT entry_id) FROM `+schema+`.finished_entries)`).Scan(&live, &finished, &distinct); err != nil {
		t.Fatalf("read the namespace: %v", err)
	}
	if live != 0 || finished != len(ids) || distinct != len(ids) {
		t.Errorf("database: %d live entries, %d finished completed (%d distinct); want 0 and %d", live, finished, distinct, len(ids))
	}
	rows, err := c.Query(ctx, `SELECT entry_id, count(*) FROM `+schema+`.audit WHERE method = 'queue/v2/lease'
		GROUP BY entry_id HAVING count(*) <> 1 ORDER BY entry_id LIMIT 20`)
	if err != nil {
		t.Fatalf("read the audit: %v", err)
	}
	for rows.Next() {
		var id string
		var k int
		if err := rows.Scan(&id, &k); err != nil {
			t.Fatal(err)
		}
		t.Errorf("audit: entry %s has %d queue/v2/lease hand-outs, want exactly 1", id, k)
	}
	rows.Close()
	var leasedRows int
	if err := c.QueryRow(ctx, `SELECT count(DISTINCT entry_id) FROM `+schema+`.audit WHERE method = 'queue/v2/lease'`).Scan(&leasedRows); err != nil {
		t.Fatal(err)
	} else if leasedRows != len(ids) {
		t.Errorf("audit: %d entries handed out by queue/v2/lease, want %d", leasedRows, len(ids))
	}
}

// retrySummary is the -32205 counts for the log, "none" without any.
func (l *ledger) retrySummary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.retries) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(l.retries))
	for k := range l.retries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s ×%d (e.g. %q)", k, l.retries[k], l.samples[k])
	}
	return b.String()
}

// perHost is how many tickets each host got, for the log.
func (l *ledger) perHost(hosts []*daemonHost) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	idx := map[string]int{}
	for i, h := range hosts {
		idx[h.owner] = i
	}
	out := make([]int, len(hosts))
	for _, fs := range l.tickets {
		for _, f := range fs {
			if i, ok := idx[f.QueueLease.OwnerID]; ok {
				out[i]++
			}
		}
	}
	return out
}
