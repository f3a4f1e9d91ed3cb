package durablesqlite

import (
	"fmt"
	"sort"
	"sync"
)

// stage is how far the driver got with one key before the kill, as far as
// the driver can know: what it sent, and which replies it saw.
type stage int

const (
	beginSent   stage = iota + 1 // begin_step written, no reply seen
	reserved                     // begin_step answered new
	commitSent                   // commit_step written, no reply seen
	commitAcked                  // commit_step answered {"ack":true}
)

func (s stage) String() string {
	return [...]string{"", "begin sent", "reserved", "commit sent", "commit acked"}[s]
}

// keyState is the driver's record of one idempotency key.
type keyState struct {
	run    string
	stage  stage
	stepID string // known from stage reserved on (or learnt by the verifier)
	output string // what commit_step carried
}

// ledger is the driver's record of every key, across all kills. The
// verifier checks the store against it and then tightens it: an ambiguous
// stage (a request sent but its reply lost in the kill) is resolved by what
// the store shows, so later rounds check that key exactly.
type ledger struct {
	mu   sync.Mutex
	keys map[string]*keyState
	// How the kills fell, learnt while resolving: a commit that landed with
	// its reply lost, a commit that never ran, a reservation whose reply
	// was lost.
	landed, notRun, lostNew int
}

func newLedger() *ledger { return &ledger{keys: map[string]*keyState{}} }

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

// storeView is what a fresh process and the file show after a kill.
type storeView struct {
	committed   map[string]stepRecord // by idempotency key
	outstanding map[string]string     // idempotency key → step id of the reservation
}

// check compares the view with the ledger, returning every breach of the
// four invariants that concern keys:
//   - every acknowledged commit is there, with its step id and output;
//   - a key is committed at most once and is never both committed and
//     outstanding (the view builder reports duplicates);
//   - recover_in_flight reports exactly the unfinished reservations: every
//     key reserved and not committed, nothing the driver never began, and a
//     key whose begin or commit reply was lost in exactly one coherent state.
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
				bad = append(bad, fmt.Sprintf("%s is in the store but the driver never sent it", key))
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

// outstanding lists the reserved keys' step ids.
func (l *ledger) outstanding() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for _, k := range l.keys {
		if k.stage == reserved {
			ids = append(ids, k.stepID)
		}
	}
	return ids
}

func keysOf[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
