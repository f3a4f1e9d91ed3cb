package queuesqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
)

// seed enqueues n entries (subjects TASK-0 … TASK-n-1, in no particular
// order) through one long-lived process, eight requests in flight so the
// pipe round trips overlap the commits.
func seed(t *testing.T, p *project, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := p.spawn()
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range n {
			next <- i
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				resp, err := h.Call(ctx, "queue/enqueue", dispatch(fmt.Sprintf("TASK-%d", i)))
				if err != nil || resp.Error != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("seed %d: %v %v", i, err, resp))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d enqueues failed, first: %s", len(failures), failures[0])
	}
	if _, err := h.Shutdown(ctx, fakehost.LadderDaemon); err != nil {
		t.Fatal(err)
	}
}

type leaseResult struct {
	Leased []struct {
		EntryID    string `json:"entry_id"`
		WorkflowID string `json:"workflow_id"`
	} `json:"leased"`
}

// leaseLoop leases with max 1–3 and fresh workflow ids until a lease comes
// back empty, and returns entry id → workflow id.
func leaseLoop(ctx context.Context, call func(params json.RawMessage) (*fakehost.Response, error), worker int) (map[string]string, error) {
	got := map[string]string{}
	for round := 0; ; round++ {
		max := 1 + round%3
		ids := make([]string, max)
		for i := range ids {
			ids[i] = fmt.Sprintf("w%d-%d-%d", worker, round, i)
		}
		params, _ := json.Marshal(map[string]any{"max": max, "workflow_ids": ids})
		resp, err := call(params)
		if err != nil {
			return got, err
		}
		if resp.Error != nil {
			return got, fmt.Errorf("lease: %d %s", resp.Error.Code, resp.Error.Message)
		}
		var r leaseResult
		if err := json.Unmarshal(resp.Result, &r); err != nil {
			return got, err
		}
		if len(r.Leased) == 0 {
			return got, nil
		}
		for k, e := range r.Leased {
			if e.WorkflowID != ids[k] {
				return got, fmt.Errorf("entry %s got workflow %s, want %s", e.EntryID, e.WorkflowID, ids[k])
			}
			if prev, dup := got[e.EntryID]; dup {
				return got, fmt.Errorf("entry %s leased twice by one process (%s, %s)", e.EntryID, prev, e.WorkflowID)
			}
			got[e.EntryID] = e.WorkflowID
		}
	}
}

// checkLeasedOnce merges per-process results: every entry exactly once,
// and the database agrees (all assigned, with the workflow id returned).
func checkLeasedOnce(t *testing.T, p *project, n int, results []map[string]string) {
	t.Helper()
	all := map[string]string{}
	for w, r := range results {
		for id, wf := range r {
			if prev, dup := all[id]; dup {
				t.Errorf("entry %s leased twice: %s and %s (process %d)", id, prev, wf, w)
			}
			all[id] = wf
		}
	}
	if len(all) != n {
		t.Errorf("%d distinct entries leased, want %d", len(all), n)
	}
	db := p.openDB()
	rows, err := db.Query(`SELECT entry_id, state, COALESCE(workflow_id, '') FROM entries`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	count := 0
	for rows.Next() {
		var id, state, wf string
		if err := rows.Scan(&id, &state, &wf); err != nil {
			t.Fatal(err)
		}
		count++
		if state != "assigned" || all[id] != wf {
			t.Errorf("entry %s: %s with workflow %q, the host was told %q", id, state, wf, all[id])
		}
	}
	if count != n {
		t.Errorf("database holds %d entries, want %d", count, n)
	}
	var audited int
	if err := db.QueryRow(`SELECT COUNT(*) FROM audit WHERE method = 'queue/lease'`).Scan(&audited); err != nil || audited != n {
		t.Errorf("%d lease audit rows, want %d (%v)", audited, n, err)
	}
}

// TestFourProcessesLeaseEachEntryOnce: four long-lived processes lease in a
// loop from 2,000 entries until the queue is empty; every entry is leased
// exactly once.
func TestFourProcessesLeaseEachEntryOnce(t *testing.T) {
	const n, workers = 2000, 4
	p := newProject(t)
	seeded := time.Now()
	seed(t, p, n)
	t.Logf("seeded %d entries through the plugin in %v", n, time.Since(seeded).Round(time.Millisecond))
	leasing := time.Now()
	defer func() { t.Logf("leased them all in %v", time.Since(leasing).Round(time.Millisecond)) }()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	hosts := make([]*fakehost.Host, workers)
	for w := range hosts {
		hosts[w] = p.spawn()
	}
	results := make([]map[string]string, workers)
	errs := make([]error, workers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[w], errs[w] = leaseLoop(ctx, func(params json.RawMessage) (*fakehost.Response, error) {
				return hosts[w].Call(ctx, "queue/lease", params)
			}, w)
		}()
	}
	close(start)
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", w, err)
		}
		if len(results[w]) == 0 {
			t.Errorf("process %d leased nothing: the test did not run them side by side", w)
		}
	}
	checkLeasedOnce(t, p, n, results)
	t.Logf("leases per process: %d %d %d %d", len(results[0]), len(results[1]), len(results[2]), len(results[3]))
}

// TestPerCallProcessesLeaseEachEntryOnce: the same in the daemon's process
// model, a fresh process per lease, four callers at once.
func TestPerCallProcessesLeaseEachEntryOnce(t *testing.T) {
	const n, workers = 60, 4
	p := newProject(t)
	seed(t, p, n)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	results := make([]map[string]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[w], errs[w] = leaseLoop(ctx, func(params json.RawMessage) (*fakehost.Response, error) {
				h := p.spawn()
				defer h.Shutdown(ctx, fakehost.LadderDaemon)
				return h.Call(ctx, "queue/lease", params)
			}, w)
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", w, err)
		}
	}
	checkLeasedOnce(t, p, n, results)
}

// TestSimultaneousFirstStart: eight processes make the first calls on a
// project at the same moment, so they create and migrate the database
// concurrently. Every call succeeds and the schema is migrated once.
func TestSimultaneousFirstStart(t *testing.T) {
	const n = 8
	p := newProject(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hosts := make([]*fakehost.Host, n)
	for i := range hosts {
		hosts[i] = p.spawn() // initialize does not touch the disk
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := h.Call(ctx, "queue/enqueue", dispatch(fmt.Sprintf("TASK-%d", i)))
			if err != nil || resp.Error != nil {
				errs <- fmt.Sprintf("process %d: %v %v", i, err, resp.Error)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	db := p.openDB()
	var version, entries, pending int
	var tables string
	_ = db.QueryRow(`PRAGMA user_version`).Scan(&version)
	_ = db.QueryRow(`SELECT COUNT(*) FROM entries`).Scan(&entries)
	_ = db.QueryRow(`SELECT n FROM state_counts WHERE state = 'pending'`).Scan(&pending)
	_ = db.QueryRow(`SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)`).Scan(&tables)
	// Schema 2 is the queue 0.4.0 (generation-fenced) schema.
	const wantTables = "audit entries finished_entries idempotency_bindings state_counts subject_generations"
	if version != 2 || entries != n || pending != n || tables != wantTables {
		t.Errorf("user_version %d, %d entries (%d counted pending), tables %q; want 2, %d, %d, one of each table", version, entries, pending, tables, n, n)
	}
	var mode string
	_ = db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	if !strings.EqualFold(mode, "wal") {
		t.Errorf("journal_mode %q, want wal", mode)
	}
}
