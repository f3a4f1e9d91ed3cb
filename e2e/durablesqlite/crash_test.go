package durablesqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/ledger"
	"github.com/animus-plugins/animus-plugins/pkg/sqlitex"
)

// TestSIGKILLFiftyTimes is the crash proof. Fifty times, a plugin
// process runs a begin/commit loop (three pipelined lanes, fresh keys) and
// is killed with SIGKILL after a random 0–40 ms, mid-transaction as often as
// not. After each kill a fresh plugin process and the SQLite file itself
// are checked against the driver's ledger:
//
//  1. every acknowledged commit is still there, unchanged;
//  2. no key has two committed outcomes (none in the file, none on the wire);
//  3. epochs never go backwards: every epoch handed out, by drivers and
//     verifiers alike, is above every earlier one, and the file's counter is
//     at least the highest;
//  4. recover_in_flight reports exactly the unfinished reservations.
//
// The kill times come from a seeded generator; the seed is logged.
func TestSIGKILLFiftyTimes(t *testing.T) {
	const kills, lanes = 50, 3
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	pr := newProject(t)
	cfg := e2etest.Config(t, binary, pr.opts)
	l := ledger.New()
	var epochs []uint64 // every epoch acknowledged, in order
	var runs []string
	runEpoch := map[string]uint64{}

	for i := range kills {
		run := fmt.Sprintf("crash-%02d", i)
		runs = append(runs, run)
		drv, err := fakehost.Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drv.Initialize(context.Background(), pr.opts.Handshake); err != nil {
			t.Fatal(err)
		}
		d := &proc{t: t, h: drv}
		e := d.beginRun(run, "p")
		epochs, runEpoch[run] = append(epochs, e), e

		var wg sync.WaitGroup
		for lane := range lanes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				drive(t, d, l, run, lane)
			}()
		}
		time.Sleep(time.Duration(rng.IntN(41)) * time.Millisecond)
		if err := drv.Kill(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if v := drv.Violations(); len(v) > 0 {
			t.Errorf("kill %d: driver saw protocol violations: %v", i, v)
		}
		drv.Close()

		epochs = verify(t, pr, l, runs, runEpoch, epochs)
		if t.Failed() {
			t.Fatalf("kill %d of %d (seed %d): invariants broken; ledger %v", i+1, kills, seed, l.Counts())
		}
	}
	t.Logf("after %d kills: keys by stage %v; %d epochs, last %d", kills, l.Counts(), len(epochs), epochs[len(epochs)-1])

	// The reservations the kills left behind are live (300 s TTL): a fresh
	// process can still commit them by the dead holders' step ids, and then
	// nothing is in flight.
	p := pr.start()
	open := l.ByStage(ledger.Reserved)
	for _, k := range open {
		p.must("durable/commit_step", map[string]any{"step_id": k.StepID, "outcome": "success"}, nil)
	}
	if left := p.recover(0); len(left) != 0 {
		t.Fatalf("after committing the %d leftover reservations, recover_in_flight still reports %d runs", len(open), len(left))
	}
	p.shutdown()
}

// drive runs one lane of the loop until the connection dies with the kill.
// Each key's stage is recorded before its request is written and after its
// reply is read, so the ledger never claims more than the driver saw.
func drive(t *testing.T, d *proc, l *ledger.Ledger, run string, lane int) {
	for n := 0; ; n++ {
		key := fmt.Sprintf("%s:lane%d:%d", run, lane, n)
		l.Record(key, func(k *ledger.Key) { k.Run, k.Stage = run, ledger.BeginSent })
		var r beginResult
		rpcErr, err := d.call("durable/begin_step", stepParams(run, "p", fmt.Sprintf("lane%d-%d", lane, n), key), &r)
		if lost(err) {
			return
		}
		if err != nil || rpcErr != nil || r.Status != "new" {
			t.Errorf("%s: begin_step %+v %v %v, want new for a fresh key", key, r, err, rpcErr)
			return
		}
		output := fmt.Sprintf(`{"key":%q,"n":%d}`, key, n)
		l.Record(key, func(k *ledger.Key) { k.Stage, k.StepID, k.Output = ledger.CommitSent, r.StepID, output })
		rpcErr, err = d.call("durable/commit_step", map[string]any{"step_id": r.StepID, "outcome": "success", "output": json.RawMessage(output)}, nil)
		if lost(err) {
			return
		}
		if err != nil || rpcErr != nil {
			t.Errorf("%s: commit_step %v %v", key, err, rpcErr)
			return
		}
		l.Record(key, func(k *ledger.Key) { k.Stage = ledger.CommitAcked })
	}
}

func lost(err error) bool {
	return err != nil && (errors.Is(err, fakehost.ErrConnectionLost) || strings.Contains(err.Error(), "connection lost") ||
		strings.Contains(err.Error(), "stdin") || strings.Contains(err.Error(), "broken pipe"))
}

// verify checks the invariants through a fresh process and in the file, and
// returns epochs with the verifier's own epoch appended.
func verify(t *testing.T, pr *project, l *ledger.Ledger, runs []string, runEpoch map[string]uint64, epochs []uint64) []uint64 {
	t.Helper()
	v := pr.start()
	epochs = append(epochs, v.beginRun("verifier", "p"))
	for i := 1; i < len(epochs); i++ {
		if epochs[i] <= epochs[i-1] {
			t.Errorf("epoch went backwards or repeated: %v", epochs[max(0, i-3):i+1])
		}
	}

	view := ledger.View{Committed: map[string]ledger.Commit{}, Outstanding: map[string]string{}}
	lastName := map[string]string{}
	for _, run := range runs {
		for _, s := range v.query(run, "p") {
			if _, dup := view.Committed[s.IdempotencyKey]; dup {
				t.Errorf("%s committed twice", s.IdempotencyKey)
			}
			view.Committed[s.IdempotencyKey] = ledger.Commit{StepID: s.StepID, Output: string(s.Output)}
			lastName[run] = s.StepName
		}
	}
	for _, r := range v.recover(0) {
		if want := runEpoch[r.RunID]; r.ReplayState.Epoch != want || r.PhaseID != "p" {
			t.Errorf("recover_in_flight: run %s/%s epoch %d, its begin_workflow_run said %d", r.RunID, r.PhaseID, r.ReplayState.Epoch, want)
		}
		if got := r.LastCommittedStep; (got == nil) != (lastName[r.RunID] == "") || (got != nil && *got != lastName[r.RunID]) {
			t.Errorf("recover_in_flight: run %s last_committed_step %v, query_run's last is %q", r.RunID, got, lastName[r.RunID])
		}
		for _, o := range r.ReplayState.Outstanding {
			if _, dup := view.Outstanding[o.IdempotencyKey]; dup || !strings.HasPrefix(o.IdempotencyKey, r.RunID+":") {
				t.Errorf("recover_in_flight: %s listed twice or under the wrong run %s", o.IdempotencyKey, r.RunID)
			}
			view.Outstanding[o.IdempotencyKey] = o.StepID
		}
	}
	for _, b := range l.Check(view) {
		t.Error(b)
	}
	v.shutdown()
	checkFile(t, filepath.Join(pr.dir, ".animus", "durable.sqlite"), epochs[len(epochs)-1])
	return epochs
}

// checkFile opens the database directly: the file is intact, no key has two
// committed rows, and the persisted epoch counter covers every epoch seen.
func checkFile(t *testing.T, path string, lastEpoch uint64) {
	t.Helper()
	db, err := sqlitex.Open(context.Background(), sqlitex.Options{Path: path, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var integrity string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Errorf("integrity_check: %q %v", integrity, err)
	}
	var dups int
	if err := db.QueryRow(`SELECT count(*) FROM (SELECT idempotency_key FROM steps WHERE state = 'committed'
		GROUP BY idempotency_key HAVING count(*) > 1)`).Scan(&dups); err != nil || dups != 0 {
		t.Errorf("%d keys with two committed rows in the file (%v)", dups, err)
	}
	var stored uint64
	if err := db.QueryRow(`SELECT last_epoch FROM meta`).Scan(&stored); err != nil || stored < lastEpoch {
		t.Errorf("persisted epoch counter %d, but epoch %d was handed out (%v)", stored, lastEpoch, err)
	}
}
