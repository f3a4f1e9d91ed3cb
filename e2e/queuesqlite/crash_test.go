package queuesqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSIGKILLMidLease: a process is killed with SIGKILL while leases are in
// flight. Afterwards the database passes SQLite's integrity check and holds
// no half-applied lease: every entry is either pending with no lease
// fields or assigned with a workflow id, an assigned_at and exactly one
// lease audit row, and every lease the host was told about is there. The
// next process serves the rest of the queue.
func TestSIGKILLMidLease(t *testing.T) {
	const n = 400
	p := newProject(t)
	seed(t, p, n)
	told := map[string]string{} // entry → workflow id the host received
	var lost, inTx int          // leases committed whose answer died; kills inside a transaction
	for round, delay := range []time.Duration{15 * time.Millisecond, 40 * time.Millisecond, 90 * time.Millisecond} {
		before := countAssigned(t, p)
		got, locked := killDuringLeases(t, p, round, delay)
		if locked {
			inTx++
		}
		for id, wf := range got {
			if _, dup := told[id]; dup {
				t.Errorf("round %d: entry %s leased twice", round, id)
			}
			told[id] = wf
		}
		after := countAssigned(t, p)
		if after-before < len(got) {
			t.Errorf("round %d: the host was told of %d leases, the database gained %d", round, len(got), after-before)
		}
		lost += after - before - len(got)
		checkConsistent(t, p, told)
	}
	t.Logf("%d leases answered before the kills, %d committed but unanswered; %d of 3 kills inside a write transaction", len(told), lost, inTx)
	if inTx == 0 {
		t.Errorf("no kill landed while the process held the write lock; the test proved nothing about half-applied leases")
	}

	// The survivors' queue still works: lease everything that is left.
	rest := map[string]string{}
	for {
		var r leaseResult
		if err := json.Unmarshal([]byte(p.result("queue/lease", raw(`{"max":500}`))), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Leased) == 0 {
			break
		}
		for _, e := range r.Leased {
			if _, dup := told[e.EntryID]; dup {
				t.Errorf("entry %s leased again after the crash", e.EntryID)
			}
			rest[e.EntryID] = e.WorkflowID
		}
	}
	if got := countAssigned(t, p); got != n {
		t.Errorf("%d of %d entries assigned at the end: entries were lost or duplicated", got, n)
	}
}

// killDuringLeases keeps eight lease(1) requests in flight on one process
// and SIGKILLs it after delay. It returns the leases whose answers arrived
// and whether the process held the write lock when it was killed.
func killDuringLeases(t *testing.T, p *project, round int, delay time.Duration) (map[string]string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := p.spawn()
	var mu sync.Mutex
	got := map[string]string{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				wf := fmt.Sprintf("r%d-w%d-%d", round, w, i)
				resp, err := h.Call(ctx, "queue/lease", raw(`{"max":1,"workflow_ids":["`+wf+`"]}`))
				if err != nil || resp.Error != nil {
					return // the process is gone
				}
				var r leaseResult
				if json.Unmarshal(resp.Result, &r) != nil || len(r.Leased) == 0 {
					return
				}
				mu.Lock()
				got[r.Leased[0].EntryID] = r.Leased[0].WorkflowID
				mu.Unlock()
			}
		}()
	}
	// Kill the moment the process is seen holding SQLite's WAL write lock
	// (an fcntl lock in /proc/locks), i.e. inside a lease transaction; the
	// delay is only a floor and a fallback.
	time.Sleep(delay)
	deadline := time.Now().Add(2 * time.Second)
	locked := false
	for !locked && time.Now().Before(deadline) {
		locked = holdsWriteLock(h.Pid())
	}
	if err := h.Kill(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if exited, code := h.Exited(); !exited || code != -1 {
		t.Fatalf("round %d: process not killed by a signal (exited %v, code %d)", round, exited, code)
	}
	return got, locked
}

// holdsWriteLock reports whether pid holds an exclusive POSIX lock, which
// for a SQLite database in WAL mode means a write transaction is open.
func holdsWriteLock(pid int) bool {
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false
	}
	want := " " + strconv.Itoa(pid) + " "
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "POSIX") && strings.Contains(line, "WRITE") && strings.Contains(line, want) {
			return true
		}
	}
	return false
}

func countAssigned(t *testing.T, p *project) int {
	t.Helper()
	var n int
	if err := p.openDB().QueryRow(`SELECT COUNT(*) FROM entries WHERE state = 'assigned'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func checkConsistent(t *testing.T, p *project, told map[string]string) {
	t.Helper()
	db := p.openDB()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	rows, err := db.Query(`SELECT e.entry_id, e.state, e.workflow_id IS NULL, e.assigned_at IS NULL, COALESCE(e.workflow_id, ''),
		(SELECT COUNT(*) FROM audit a WHERE a.entry_id = e.entry_id AND a.method = 'queue/lease'),
		(SELECT COUNT(*) FROM audit a WHERE a.entry_id = e.entry_id AND a.method = 'queue/lease' AND a.workflow_id = e.workflow_id)
		FROM entries e`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, state, wf string
		var noWF, noAt bool
		var leases, matching int
		if err := rows.Scan(&id, &state, &noWF, &noAt, &wf, &leases, &matching); err != nil {
			t.Fatal(err)
		}
		switch {
		case state == "pending" && (!noWF || !noAt || leases != 0):
			t.Errorf("half-applied lease: %s pending with workflow_id set %v, assigned_at set %v, %d lease audit rows", id, !noWF, !noAt, leases)
		case state == "assigned" && (noWF || noAt || leases != 1 || matching != 1):
			t.Errorf("half-applied lease: %s assigned, workflow_id %q, assigned_at missing %v, %d lease audit rows (%d matching)", id, wf, noAt, leases, matching)
		case state != "pending" && state != "assigned":
			t.Errorf("%s in state %q", id, state)
		}
		if want, ok := told[id]; ok && (state != "assigned" || wf != want) {
			t.Errorf("the host was told %s went to workflow %s; the database says %s/%q", id, want, state, wf)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// The per-state counts (kept by triggers) agree with the rows.
	var drift int
	if err := db.QueryRow(`SELECT COUNT(*) FROM state_counts c
		WHERE c.n <> (SELECT COUNT(*) FROM entries e WHERE e.state = c.state)`).Scan(&drift); err != nil || drift != 0 {
		t.Errorf("%d state counts disagree with the entries (%v)", drift, err)
	}
}
