package durablepostgres

import (
	"fmt"
	"sort"
	"sync"
)

// stage is how far a driver got with one key, as far as it can know: what
// it sent, and which replies it saw.
type stage int

const (
	beginSent   stage = iota + 1 // begin_step written, no reply seen
	reserved                     // begin_step answered new (or, after a retry, in_progress with the lost attempt's step)
	commitSent                   // commit_step written, no reply seen
	commitAcked                  // commit_step answered {"ack":true}
)

func (s stage) String() string {
	return [...]string{"", "begin sent", "reserved", "commit sent", "commit acked"}[s]
}

// keyState is the drivers' record of one idempotency key.
type keyState struct {
	run    string
	stage  stage
	stepID string // known from stage reserved on (or learnt by the verifier)
	output string // what commit_step carried
}

// ledger is the drivers' record of every key, across all kills and
// faults, as e2e/durablesqlite keeps it. The verifier checks the store
// against it and then tightens it: an ambiguous stage (a request sent, its
// reply lost in a kill) is resolved by what the store shows, so later
// rounds check that key exactly.
type ledger struct {
	mu   sync.Mutex
	keys map[string]*keyState
	// How the kills fell, learnt while resolving.
	landed, notRun, lostNew int
	// -32304 answers (data.retryable true) the drivers retried, by method.
	retried map[string]int
}

func newLedger() *ledger { return &ledger{keys: map[string]*keyState{}, retried: map[string]int{}} }

func (l *ledger) record(key string, f func(k *keyState)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.keys[key]
	if k == nil {
		k = &keyState{}
		l.keys[key] = k
	}
	f(k)
}

func (l *ledger) retry(method string) {
	l.mu.Lock()
	l.retried[method]++
	l.mu.Unlock()
}

// storeView is what a fresh process on another host shows.
type storeView struct {
	committed   map[string]stepRecord // by idempotency key
	outstanding map[string]string     // idempotency key → step id of the reservation
}

// check compares the view with the ledger, returning every breach:
//   - every acknowledged commit is there, with its step id and first output;
//   - a key is never both committed and outstanding (the view builder
//     reports a key committed twice);
//   - recover_in_flight reports exactly the unfinished reservations;
//   - nothing is in the store that no driver sent.
//
// It then resolves the ambiguous stages from the view.
func (l *ledger) check(v storeView) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var bad []string
	for key, k := range l.keys {
		c, isCommitted := v.committed[key]
		o, isOutstanding := v.outstanding[key]
		if isCommitted && isOutstanding {
			bad = append(bad, fmt.Sprintf("%s (%s) is committed and outstanding at once", key, k.stage))
			continue
		}
		switch k.stage {
		case commitAcked:
			if !isCommitted || c.StepID != k.stepID || string(c.Output) != k.output {
				bad = append(bad, fmt.Sprintf("%s: acknowledged commit lost or changed: have %+v, committed %s %s", key, c, k.stepID, k.output))
			}
		case commitSent:
			switch {
			case isCommitted && c.StepID == k.stepID && string(c.Output) == k.output:
				k.stage = commitAcked // the commit landed; its reply was lost
				l.landed++
			case isOutstanding && o == k.stepID:
				k.stage = reserved // the commit never ran
				l.notRun++
			default:
				bad = append(bad, fmt.Sprintf("%s: commit in flight at the kill, now committed=%v (%+v) outstanding=%v (%s)", key, isCommitted, c, isOutstanding, o))
			}
		case reserved:
			if isCommitted || !isOutstanding || o != k.stepID {
				bad = append(bad, fmt.Sprintf("%s: reserved as %s and never committed, now committed=%v outstanding=%v (%s)", key, k.stepID, isCommitted, isOutstanding, o))
			}
		case beginSent:
			switch {
			case isCommitted:
				bad = append(bad, fmt.Sprintf("%s: only begun, yet committed: %+v", key, c))
			case isOutstanding:
				k.stage, k.stepID = reserved, o // the reservation landed; its reply was lost
				l.lostNew++
			}
		}
	}
	for _, m := range []map[string]bool{keysOf(v.committed), keysOf(v.outstanding)} {
		for key := range m {
			if l.keys[key] == nil {
				bad = append(bad, fmt.Sprintf("%s is in the store but no driver sent it", key))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// counts summarises the ledger by stage.
func (l *ledger) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, k := range l.keys {
		out[k.stage.String()]++
	}
	out["kill between commit and its reply"] = l.landed
	out["kill before a sent commit ran"] = l.notRun
	out["kill between reservation and its reply"] = l.lostNew
	return out
}

// byStage returns the keys at stage s with their state.
func (l *ledger) byStage(s stage) map[string]keyState {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]keyState{}
	for key, k := range l.keys {
		if k.stage == s {
			out[key] = *k
		}
	}
	return out
}

func (l *ledger) retries() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, v := range l.retried {
		out[k] = v
	}
	return out
}

func keysOf[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
