package queuesqlite

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/queuev2"
)

// killPoint is where a round of TestV2SIGKILLBetweenLeaseAndComplete kills
// the plugin. Every round first kills the lease process right after its
// lease reply arrived, before shutdown (the daemon has the ticket, the
// process is still mid-call); the completion rounds then also kill the
// completion call's process.
type killPoint int

const (
	killAfterLeaseReply killPoint = iota
	// killInCompletionTx: SIGKILL once the process is caught (stopped)
	// holding SQLite's write lock, i.e. inside the completion transaction;
	// if it answers first, right after the answer.
	killInCompletionTx
	// killAfterCompletionSent: SIGKILL 0–500 µs after the request was written,
	// wherever the process then is.
	killAfterCompletionSent
)

// roundPlan is the kill points of every five rounds: 30 / 10 / 10 of 50.
var roundPlan = [5]killPoint{killAfterLeaseReply, killAfterLeaseReply, killAfterLeaseReply, killInCompletionTx, killAfterCompletionSent}

var killPointNames = [...]string{"after the lease reply", "inside the completion transaction", "just after the completion was sent"}

// killRound is the dead daemon's local record of one round.
type killRound struct {
	at     killPoint
	ticket queuev2.ExecutionFence
	// acked: the completion answer arrived before the kill (it must then
	// say applied); lockHeld: the kill landed inside a write transaction.
	acked, lockHeld bool
}

// TestV2SIGKILLBetweenLeaseAndComplete is the crash proof for v2: 50
// times a process leases one entry (queue/v2/lease) and is SIGKILLed before
// the entry is completed (see killPoint). With the tickets expired, a
// restarted daemon (new owner, per-call processes) reconciles every round
// from its local record: the dead owner's renew is refused, the entry is
// recovered exactly once (unless the killed completion had committed: then
// recovery answers "queue entry is done" and the stored ticket's
// completion already_applied), and completed exactly once; a repeat is
// already_applied. Nothing is left in the queue and every entry has one
// finished record.
func TestV2SIGKILLBetweenLeaseAndComplete(t *testing.T) {
	const rounds = 50
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0x6b11))
	p := newProject(t)
	p.env["ANIMUS_QUEUE_LEASE_TTL_SECS"] = "1"
	began := time.Now()
	seed07(t, p, rounds)

	ledger := make([]killRound, rounds)
	for i := range ledger {
		ledger[i] = p.killRound(i, roundPlan[i%len(roundPlan)], rng)
	}
	killed := time.Since(began)

	// Before expiry nothing may be handed out again, nor reported blocked.
	all := make([]queuev2.ExecutionFence, rounds)
	for i, r := range ledger {
		all[i] = r.ticket
	}
	d := p.startDaemon07()
	if r, _ := d.lease(5, nil, nil); len(r.Leased) != 0 || len(r.Blocked) != 0 {
		t.Errorf("lease after the kills: %d leased, %+v blocked; want nothing", len(r.Leased), r.Blocked)
	}
	waitExpired(all)
	if r, _ := d.lease(5, nil, nil); len(r.Leased) != 0 || len(r.Blocked) != 0 {
		t.Errorf("lease after expiry: %d leased, %+v blocked; expired tickets are never handed out again", len(r.Leased), r.Blocked)
	}

	recovering := time.Now()
	var recovered, committed, acked, completionRounds, inTx int
	for i, r := range ledger {
		if r.at != killAfterLeaseReply {
			completionRounds++
		}
		if r.lockHeld {
			inTx++
		}
		if r.acked {
			acked++
		}
		switch p.reconcileKilled(d, i, r) {
		case "recovered":
			recovered++
		case "committed":
			committed++
		}
	}
	if recovered+committed != rounds {
		t.Errorf("%d recovered + %d completed before the kill, want %d", recovered, committed, rounds)
	}
	// A completion round whose answer came first proves nothing about a
	// kill mid-call; the schedule makes most of them land before it.
	cut := completionRounds - acked
	if cut == 0 {
		t.Errorf("all %d completion calls answered before their kill: no completion was killed mid-call", completionRounds)
	}
	if s := p.stats07(); s != (queueStats{}) {
		t.Errorf("queue/stats at the end: %+v, want an empty queue", s)
	}
	db := p.openDB()
	var check string
	var finished int
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q %v", check, err)
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM finished_entries WHERE outcome = 'completed'`).Scan(&finished); err != nil || finished != rounds {
		t.Errorf("%d finished records with outcome completed, want %d (%v)", finished, rounds, err)
	}
	t.Logf("v2 SIGKILL: %d rounds (seed %d) in %v: every lease process killed after its reply; %d completion calls killed too, "+
		"%d of them before the reply (%d while holding the write lock): %d had committed, %d rolled back; "+
		"restart reconciled in %v: %d recovered once and completed once, %d completed by the killed call (replay already_applied); "+
		"%d finished records, nothing left in the queue",
		rounds, seed, killed.Round(time.Millisecond), completionRounds, cut, inTx, committed-acked, cut-(committed-acked),
		time.Since(recovering).Round(time.Millisecond), recovered, committed, finished)
}

// killRound leases one entry for a fresh owner and kills the lease
// process after the reply; completion rounds then send the completion
// with that ticket from another process and kill it too.
func (p *project) killRound(i int, at killPoint, rng *rand.Rand) killRound {
	t := p.t
	t.Helper()
	r := killRound{at: at}
	h := p.spawn07()
	lease, err := leaseV2Once(h, "daemon-dead-"+queuev2.NewUUID(), 1, nil)
	if err != nil || len(lease.Leased) != 1 {
		t.Fatalf("round %d: lease %+v: %v", i, lease, err)
	}
	r.ticket = lease.Leased[0].Execution
	mustKill(t, h, i)
	if at == killAfterLeaseReply {
		return r
	}
	h = p.spawn07()
	type answer struct {
		m   queuev2.MutationResponse
		err error // the call was cut short by the kill
	}
	answered := make(chan answer, 1)
	go func() {
		m, err := mutateOn(h, "queue/v2/completion", map[string]any{"execution": r.ticket, "status": "completed"})
		answered <- answer{m, err}
	}()
	if at == killInCompletionTx {
		r.lockHeld = stopInsideWriteTx(h.Pid(), func() bool { return len(answered) > 0 }, time.Now().Add(time.Second))
	} else {
		time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond) // the kill point, not a synchronisation
	}
	mustKill(t, h, i)
	if a := <-answered; a.err == nil {
		r.acked = true
		expect(t, fmt.Sprintf("round %d: completion answered before the kill", i), a.m, "applied", "")
	}
	return r
}

func mustKill(t *testing.T, h *fakehost.Host, round int) {
	t.Helper()
	if err := h.Kill(); err != nil {
		t.Fatal(err)
	}
	if exited, code := h.Exited(); !exited || code != -1 {
		t.Fatalf("round %d: process not killed by a signal (exited %v, code %d)", round, exited, code)
	}
}

// reconcileKilled is the restarted daemon's startup reconciliation of one
// dead round, in the per-call process model. It returns "recovered" or
// "committed" (the killed completion had committed).
func (p *project) reconcileKilled(d *daemon07, i int, r killRound) string {
	t := p.t
	t.Helper()
	old := r.ticket
	what := func(s string) string { return fmt.Sprintf("round %d (%s) %s", i, killPointNames[r.at], s) }
	renew := d.mutate("queue/v2/lease/renew", map[string]any{"execution": old})
	rec := d.mutate("queue/v2/lease/recover", map[string]any{"execution": old, "new_owner_id": d.owner})
	if rec.Outcome == "not_assigned" {
		// The killed completion committed: the stored ticket's completion
		// replays it; nothing else may finish the entry again.
		if r.at == killAfterLeaseReply {
			t.Errorf("%s: recover answered not_assigned %q, but nothing completed the entry", what("recover"), rec.ReasonText())
		}
		expect(t, what("renew of the dead owner's ticket"), renew, "not_assigned", "queue entry is done")
		expect(t, what("recover"), rec, "not_assigned", "queue entry is done")
		expect(t, what("completion retry with the stored ticket"), d.complete(old, "completed"), "already_applied", "")
		return "committed"
	}
	if r.acked {
		t.Errorf("%s: recovered an entry whose completion was acknowledged", what("recover"))
	}
	expect(t, what("renew of the dead owner's ticket"), renew, "stale_fence", "queue lease has expired and requires recovery")
	cur, err := queuev2.AcceptRecover(rec, old, d.owner)
	if err != nil {
		t.Errorf("%s: %v", what("recover"), err)
		return ""
	}
	other := p.startDaemon07()
	expect(t, what("second recovery by another owner"), other.mutate("queue/v2/lease/recover",
		map[string]any{"execution": old, "new_owner_id": other.owner}), "stale_fence", "")
	expect(t, what("renew of the dead owner's ticket after recovery"), d.mutate("queue/v2/lease/renew",
		map[string]any{"execution": old}), "stale_fence", "")
	expect(t, what("completion with the dead owner's ticket"), d.complete(old, "completed"), "stale_fence", "")
	expect(t, what("completion"), d.complete(cur, "completed"), "applied", "")
	expect(t, what("second completion"), d.complete(cur, "completed"), "already_applied", "")
	return "recovered"
}

// stopInsideWriteTx tries to freeze pid while it holds SQLite's write lock,
// so that a SIGKILL sent next lands inside the transaction for certain.
// Watching /proc/locks alone is racy: a commit can finish between seeing
// the lock and the kill. So the process is run in short slices: SIGSTOP,
// wait until it is really stopped, look at its locks; held → return true
// with the process left stopped; not held → SIGCONT and let it run a
// moment. It gives up (false, process running) when done() reports the
// call answered or at deadline. Linux only: elsewhere it returns false at
// once.
func stopInsideWriteTx(pid int, done func() bool, deadline time.Time) bool {
	if _, err := os.Stat("/proc/locks"); err != nil {
		return false
	}
	for !done() && time.Now().Before(deadline) {
		if syscall.Kill(pid, syscall.SIGSTOP) != nil {
			return false
		}
		if waitStopped(pid, deadline) && holdsWriteLock(pid) {
			return true
		}
		if syscall.Kill(pid, syscall.SIGCONT) != nil {
			return false
		}
		// The slice the process runs before the next look; shorter slices
		// sample the transaction more finely but slow the call down.
		time.Sleep(50 * time.Microsecond)
	}
	return false
}

// waitStopped waits until every thread of pid shows state T in
// /proc/<pid>/task/*/stat: SIGSTOP is delivered asynchronously, thread by
// thread, and a thread still running could be the one committing.
func waitStopped(pid int, deadline time.Time) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	for time.Now().Before(deadline) {
		tasks, err := os.ReadDir(dir)
		if err != nil || len(tasks) == 0 {
			return false
		}
		stopped := true
		for _, task := range tasks {
			switch threadState(dir + task.Name() + "/stat") {
			case 'T', 't':
			case 'Z', 'X', 0:
				return false
			default:
				stopped = false
			}
		}
		if stopped {
			return true
		}
	}
	return false
}

// threadState is the state letter of a /proc stat file (it follows the
// command name, which is in parentheses), or 0 if unreadable.
func threadState(path string) byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
		return b[i+2]
	}
	return 0
}
