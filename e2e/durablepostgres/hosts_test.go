package durablepostgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/animus-plugins/animus-plugins/e2e/fakehost"
	"github.com/animus-plugins/animus-plugins/e2e/internal/e2etest"
	"github.com/animus-plugins/animus-plugins/e2e/internal/ledger"
	"github.com/animus-plugins/animus-plugins/e2e/internal/pgns"
)

// TestSeveralHosts is the several-machines proof on the shared cluster:
// eight hosts (eight project roots, one DSN and schema) race begin_step
// on the same 500 keys, then fifty processes are SIGKILLed in the middle
// of their steps, then a host that took part in neither recovers. See
// severalHosts.
func TestSeveralHosts(t *testing.T) {
	severalHosts(t, pgns.Durable.New(t), nil)
}

// fault, when set, is injected into severalHosts in kill round round,
// while that round's driver is in the middle of its steps; the drivers
// then retry -32304 answers with data.retryable true (any other error
// answer still fails them). do gets the drivers' ledger, to see the
// retried answers, and says what it did.
type fault struct {
	what  string
	round int
	do    func(l *ledger.Ledger) string
}

// severalHosts runs the race, the kills and the recovery on s.
//
//  1. Race: after one durable/begin_workflow_run, eight processes, one per
//     host, call begin_step on the same 500 keys at once, each committing
//     whenever it wins. Exactly one "new" per key; every other answer is
//     in_progress naming the winner's step or already_committed serving
//     the winner's output; query_run holds each key once, the winner's.
//  2. Kills: fifty times a process on the next host runs a begin/commit
//     loop (three lanes, fresh keys) and is SIGKILLed after a random
//     0–40 ms, before or after a commit as it falls (in the fault round,
//     if any, a process on every host, four lanes each, all killed
//     together after the fault); after each kill a
//     fresh process on another host checks the drivers' ledger: no
//     acknowledged commit lost, no key committed twice, recover_in_flight
//     reports exactly the unfinished reservations, epochs only grow.
//  3. Recovery: a host that took part in nothing (a tenth project root)
//     calls recover_in_flight, commits every reservation the kills left
//     behind by the dead holders' step ids, retries every commit whose
//     reply a kill may have lost with another output (each acknowledges
//     and the first outcome stays), and finally nothing is in flight and
//     every key is committed exactly once with its first output.
func severalHosts(t *testing.T, s pgns.NS, f *fault) {
	const hostsN, keys, lanes, kills = 8, 500, 4, 50
	declared := e2etest.Declared(t, binaryName)
	var hosts []*host
	for i := range hostsN {
		hosts = append(hosts, newHost(t, fmt.Sprintf("host-%d", i), s, declared, nil))
	}
	verifier := newHost(t, "verifier", s, declared, nil)
	recoverer := newHost(t, "recoverer", s, declared, nil)

	// 1. The race.
	var ps []*proc
	for _, h := range hosts {
		ps = append(ps, h.start())
	}
	epochs := []uint64{ps[0].beginRun("race", "implement")}
	type answer struct {
		proc int
		beginResult
	}
	var mu sync.Mutex
	answers := make([][]answer, keys)
	winners := make([]string, keys)
	committed := make([][]byte, keys)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, p := range ps {
		for lane := range lanes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for n := lane; n < keys; n += lanes {
					k := n
					if i%2 == 1 {
						k = keys - 1 - n
					}
					var r beginResult
					if rpcErr, err := p.call("durable/begin_step", stepParams("race", "implement", fmt.Sprint(k), fmt.Sprintf("scope:race:implement:%d", k)), &r); err != nil || rpcErr != nil {
						t.Errorf("%s key %d: %v %v", hosts[i].name, k, err, rpcErr)
						return
					}
					mu.Lock()
					answers[k] = append(answers[k], answer{i, r})
					mu.Unlock()
					if r.Status != "new" {
						continue
					}
					out, _ := json.Marshal(map[string]any{"key": k, "winner": hosts[i].name})
					var ack struct {
						Ack bool `json:"ack"`
					}
					if rpcErr, err := p.call("durable/commit_step", map[string]any{"step_id": r.StepID, "outcome": "success", "output": json.RawMessage(out)}, &ack); err != nil || rpcErr != nil || !ack.Ack {
						t.Errorf("%s commit key %d: %v %v ack %v", hosts[i].name, k, err, rpcErr, ack.Ack)
						return
					}
					mu.Lock()
					winners[k], committed[k] = r.StepID, out
					mu.Unlock()
				}
			}()
		}
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	stats := map[string]int{}
	wins := map[string]int{}
	for k, as := range answers {
		news := 0
		for _, a := range as {
			stats[a.Status]++
			switch a.Status {
			case "new":
				news++
				wins[hosts[a.proc].name]++
			case "in_progress":
				if a.StepID != winners[k] || a.ExpiresAt == "" {
					t.Errorf("key %d: in_progress %+v, the winner is %s", k, a, winners[k])
				}
			case "already_committed":
				if a.StepID != winners[k] || !bytes.Equal(a.PriorOutput, committed[k]) {
					t.Errorf("key %d: already_committed %s %s, the winner committed %s %s", k, a.StepID, a.PriorOutput, winners[k], committed[k])
				}
			default:
				t.Errorf("key %d: %s got %s", k, hosts[a.proc].name, a.Status)
			}
		}
		if news != 1 || len(as) != hostsN {
			t.Errorf("key %d: %d answers, %d of them new; want %d answers, exactly 1 new", k, len(as), news, hostsN)
		}
	}
	t.Logf("race: %d hosts × %d keys = %d begin_step calls: %v; new per host %v", hostsN, keys, hostsN*keys, stats, wins)
	steps := verifier.start().query("race", "implement")
	if len(steps) != keys {
		t.Fatalf("query_run from another host has %d steps, want %d", len(steps), keys)
	}
	seen := map[string]bool{}
	for _, st := range steps {
		var k int
		if _, err := fmt.Sscanf(st.IdempotencyKey, "scope:race:implement:%d", &k); err != nil || seen[st.IdempotencyKey] {
			t.Fatalf("query_run step %+v: duplicate or foreign key", st)
		}
		seen[st.IdempotencyKey] = true
		if st.StepID != winners[k] || !bytes.Equal(st.Output, committed[k]) {
			t.Errorf("key %d: recorded %s %s, the winner committed %s %s", k, st.StepID, st.Output, winners[k], committed[k])
		}
	}
	for _, p := range ps {
		p.shutdown()
	}
	if t.Failed() {
		t.FailNow()
	}

	// 2. The kills.
	seed := uint64(time.Now().UnixNano())
	t.Logf("kill seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	l := ledger.New()
	var runs []string
	runEpoch := map[string]uint64{}
	faulted := false
	for i := range kills {
		run := fmt.Sprintf("crash-%02d", i)
		runs = append(runs, run)
		// One driver per round; in the fault round one on every host, so
		// that calls are in flight on many connections when it strikes.
		inject := f != nil && i == f.round
		driversN, lanesN := 1, lanes-1
		if inject {
			driversN, lanesN = hostsN, lanes
		}
		var drivers []*proc
		var driverHosts []*host
		for j := range driversN {
			h := hosts[(i+j)%hostsN]
			drv, err := fakehost.Start(context.Background(), h.config())
			if err != nil {
				t.Fatal(err)
			}
			ictx, cancel := context.WithTimeout(context.Background(), e2etest.SpawnTimeout)
			_, err = drv.Initialize(ictx, h.opts.Handshake)
			cancel()
			if err != nil {
				drv.Close()
				t.Fatal(err)
			}
			drivers, driverHosts = append(drivers, &proc{t: t, h: drv}), append(driverHosts, h)
		}
		// The run is registered once; every driver's steps belong to it.
		e := beginRunRetrying(t, drivers[0], l, run, "p", f != nil)
		epochs, runEpoch[run] = append(epochs, e), e

		stop := make(chan struct{})
		errs := make([]chan error, driversN)
		var wg sync.WaitGroup
		for j, d := range drivers {
			errs[j] = make(chan error, lanesN)
			for lane := range lanesN {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[j] <- drive(d, l, run, j*lanes+lane, f != nil, stop)
				}()
			}
		}
		if inject {
			time.Sleep(100 * time.Millisecond)
			began := time.Now()
			did := f.do(l)
			faulted = true
			t.Logf("%s: injected in kill round %d with %d drivers on %d hosts (%s), took %v; retried -32304 answers so far %v",
				f.what, i, driversN, driversN, did, time.Since(began).Round(time.Millisecond), l.Retries())
			// Let the drivers come back through the retries before the kill.
			time.Sleep(500 * time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(41)) * time.Millisecond)
		for _, d := range drivers {
			if err := d.h.Kill(); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		wg.Wait()
		for j, d := range drivers {
			close(errs[j])
			for err := range errs[j] {
				if err != nil {
					t.Errorf("kill %d (%s): %v\n--- driver wire log ---\n%s", i, driverHosts[j].name, err, d.h.WireLog())
				}
			}
			if v := d.h.Violations(); len(v) > 0 {
				t.Errorf("kill %d: driver on %s saw protocol violations: %v", i, driverHosts[j].name, v)
			}
			d.h.Close()
		}
		epochs = verify(t, hosts[(i+driversN)%hostsN], l, runs, runEpoch, epochs)
		if t.Failed() {
			t.Fatalf("kill %d of %d (seed %d): invariants broken; ledger %v", i+1, kills, seed, l.Counts())
		}
	}
	if f != nil && !faulted {
		t.Fatalf("%s was never injected", f.what)
	}
	t.Logf("after %d kills: keys by stage %v; %d epochs, last %d; retried -32304 answers %v", kills, l.Counts(), len(epochs), epochs[len(epochs)-1], l.Retries())

	// 3. Recovery from a host that took part in nothing.
	p := recoverer.start()
	inflight := p.recover(0)
	open := l.ByStage(ledger.Reserved)
	listed := 0
	for _, r := range inflight {
		listed += len(r.ReplayState.Outstanding)
	}
	if listed != len(open) {
		t.Errorf("recover_in_flight from another host lists %d outstanding steps in %d runs, the ledger %d reservations", listed, len(inflight), len(open))
	}
	for _, k := range open {
		p.must("durable/commit_step", map[string]any{"step_id": k.StepID, "outcome": "success", "output": json.RawMessage(`{"finished_by":"recoverer"}`)}, nil)
	}
	acked := l.ByStage(ledger.CommitAcked)
	for _, k := range acked {
		var ack struct {
			Ack bool `json:"ack"`
		}
		p.must("durable/commit_step", map[string]any{"step_id": k.StepID, "outcome": "success", "output": json.RawMessage(`{"retried":true}`)}, &ack)
		if !ack.Ack {
			t.Errorf("retried commit of %s: ack false", k.StepID)
		}
	}
	if left := p.recover(0); len(left) != 0 {
		t.Errorf("after committing the %d leftover reservations, recover_in_flight still reports %d runs", len(open), len(left))
	}
	total := 0
	for _, run := range runs {
		once := map[string]bool{}
		for _, st := range p.query(run, "p") {
			total++
			if once[st.IdempotencyKey] {
				t.Errorf("%s committed twice", st.IdempotencyKey)
			}
			once[st.IdempotencyKey] = true
			if k, ok := acked[st.IdempotencyKey]; ok && (st.StepID != k.StepID || string(st.Output) != k.Output) {
				t.Errorf("%s: after a retried commit query_run shows %s %s, the first commit was %s %s", st.IdempotencyKey, st.StepID, st.Output, k.StepID, k.Output)
			}
			if k, ok := open[st.IdempotencyKey]; ok && (st.StepID != k.StepID || string(st.Output) != `{"finished_by":"recoverer"}`) {
				t.Errorf("%s: the recoverer's commit shows as %s %s", st.IdempotencyKey, st.StepID, st.Output)
			}
		}
	}
	if want := len(acked) + len(open); total != want {
		t.Errorf("query_run holds %d committed steps across the %d runs, want %d (%d acknowledged, %d recovered)", total, len(runs), want, len(acked), len(open))
	}
	p.shutdown()
	t.Logf("recovery from a tenth host: %d runs in flight, %d reservations committed by the dead holders' step ids, %d acknowledged commits retried (first outcome kept), %d committed steps, each once",
		len(inflight), len(open), len(acked), total)
}

// beginRunRetrying registers a run, retrying -32304 (retryable) when
// retry is set.
func beginRunRetrying(t *testing.T, p *proc, l *ledger.Ledger, run, phase string, retry bool) uint64 {
	t.Helper()
	for {
		var r struct {
			Epoch uint64 `json:"epoch"`
		}
		rpcErr, err := p.call("durable/begin_workflow_run", map[string]string{"run_id": run, "phase_id": phase}, &r)
		if err == nil && retry && retryable(rpcErr) {
			l.Retry("durable/begin_workflow_run")
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err == nil && rpcErr != nil {
			err = rpcErr
		}
		if err != nil {
			t.Fatalf("begin_workflow_run %s: %v\n--- wire log ---\n%s", run, err, p.h.WireLog())
		}
		return r.Epoch
	}
}

// drive runs one lane of the begin/commit loop until the connection dies
// with the kill (nil), or a call answers what it must not (the error).
// Each key's stage is recorded before its request is written and after
// its reply is read, so the ledger never claims more than the driver saw.
// With retry, a -32304 answer with data.retryable true is retried after a
// pause, as the runner does; a begin_step retried after a lost attempt may
// find that attempt's reservation (in_progress), which the lane then
// commits. stop ends the pauses early.
func drive(d *proc, l *ledger.Ledger, run string, lane int, retry bool, stop <-chan struct{}) error {
	send := func(method string, params, out any) (*fakehost.RPCError, error) {
		for {
			rpcErr, err := d.call(method, params, out)
			if err != nil || !retry || !retryable(rpcErr) {
				return rpcErr, err
			}
			l.Retry(method)
			select {
			case <-stop:
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	for n := 0; ; n++ {
		key := fmt.Sprintf("%s:lane%d:%d", run, lane, n)
		l.Record(key, func(k *ledger.Key) { k.Run, k.Stage = run, ledger.BeginSent })
		var r beginResult
		rpcErr, err := send("durable/begin_step", stepParams(run, "p", fmt.Sprintf("lane%d-%d", lane, n), key), &r)
		if lost(err) {
			return nil
		}
		if err != nil || rpcErr != nil || (r.Status != "new" && !(retry && r.Status == "in_progress")) {
			return fmt.Errorf("%s: begin_step %+v %v %v, want new for a fresh key", key, r, err, rpcErr)
		}
		output := fmt.Sprintf(`{"key":%q,"n":%d}`, key, n)
		l.Record(key, func(k *ledger.Key) { k.Stage, k.StepID, k.Output = ledger.CommitSent, r.StepID, output })
		var ack struct {
			Ack bool `json:"ack"`
		}
		rpcErr, err = send("durable/commit_step", map[string]any{"step_id": r.StepID, "outcome": "success", "output": json.RawMessage(output)}, &ack)
		if lost(err) {
			return nil
		}
		if err != nil || rpcErr != nil || !ack.Ack {
			return fmt.Errorf("%s: commit_step ack %v %v %v", key, ack.Ack, err, rpcErr)
		}
		l.Record(key, func(k *ledger.Key) { k.Stage = ledger.CommitAcked })
	}
}

func lost(err error) bool {
	return err != nil && (errors.Is(err, fakehost.ErrConnectionLost) || strings.Contains(err.Error(), "connection lost") ||
		strings.Contains(err.Error(), "stdin") || strings.Contains(err.Error(), "broken pipe"))
}

// verify checks the invariants through a fresh process on h (not the
// killed driver's host) and returns epochs with the verifier's own
// appended.
func verify(t *testing.T, h *host, l *ledger.Ledger, runs []string, runEpoch map[string]uint64, epochs []uint64) []uint64 {
	t.Helper()
	v := h.start()
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
		if r.RunID == "verifier" {
			continue
		}
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
	return epochs
}
