// Package ledger is the record the durable store's crash and several-host
// tests keep of every idempotency key their drivers touch, across kills
// and faults, and the check of a store's view against it. The SQLite and
// the PostgreSQL e2e packages run the same drivers against different
// binaries; the invariants are the same, so they are written once.
package ledger

import (
	"fmt"
	"sort"
	"sync"
)

// Stage is how far a driver got with one key, as far as it can know: what
// it sent, and which replies it saw.
type Stage int

// The stages, in order.
const (
	BeginSent   Stage = iota + 1 // begin_step written, no reply seen
	Reserved                     // begin_step answered new (or, after a retry, in_progress with the lost attempt's step)
	CommitSent                   // commit_step written, no reply seen
	CommitAcked                  // commit_step answered {"ack":true}
)

func (s Stage) String() string {
	return [...]string{"", "begin sent", "reserved", "commit sent", "commit acked"}[s]
}

// Key is the drivers' record of one idempotency key.
type Key struct {
	Run    string
	Stage  Stage
	StepID string // known from stage Reserved on (or learnt by the verifier)
	Output string // what commit_step carried
}

// Ledger is the drivers' record of every key. The verifier checks the
// store against it and then tightens it: an ambiguous stage (a request
// sent, its reply lost in a kill) is resolved by what the store shows, so
// later rounds check that key exactly. It is safe for concurrent drivers.
type Ledger struct {
	mu   sync.Mutex
	keys map[string]*Key
	// How the kills fell, learnt while resolving: a commit that landed
	// with its reply lost, a commit that never ran, a reservation whose
	// reply was lost.
	landed, notRun, lostNew int
	// Retryable backend-unavailable answers the drivers retried, by method.
	retried map[string]int
}

// New returns an empty ledger.
func New() *Ledger { return &Ledger{keys: map[string]*Key{}, retried: map[string]int{}} }

// Record updates the record of key.
func (l *Ledger) Record(key string, f func(k *Key)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.keys[key]
	if k == nil {
		k = &Key{}
		l.keys[key] = k
	}
	f(k)
}

// Retry counts one retried answer to method.
func (l *Ledger) Retry(method string) {
	l.mu.Lock()
	l.retried[method]++
	l.mu.Unlock()
}

// Retries are the retried answers by method.
func (l *Ledger) Retries() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, v := range l.retried {
		out[k] = v
	}
	return out
}

// Commit is one committed step as query_run shows it.
type Commit struct {
	StepID string
	Output string
}

// View is what a fresh process shows after a kill or fault.
type View struct {
	Committed   map[string]Commit // by idempotency key
	Outstanding map[string]string // idempotency key → step id of the reservation
}

// Check compares the view with the ledger, returning every breach, sorted:
//   - every acknowledged commit is there, with its step id and first output;
//   - a key is never both committed and outstanding (the view builder
//     reports a key committed twice);
//   - recover_in_flight reports exactly the unfinished reservations: every
//     key reserved and not committed, and a key whose begin or commit reply
//     was lost in exactly one coherent state;
//   - nothing is in the store that no driver sent.
//
// It then resolves the ambiguous stages from the view.
func (l *Ledger) Check(v View) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var bad []string
	for key, k := range l.keys {
		c, isCommitted := v.Committed[key]
		o, isOutstanding := v.Outstanding[key]
		if isCommitted && isOutstanding {
			bad = append(bad, fmt.Sprintf("%s (%s) is committed and outstanding at once", key, k.Stage))
			continue
		}
		switch k.Stage {
		case CommitAcked:
			if !isCommitted || c.StepID != k.StepID || c.Output != k.Output {
				bad = append(bad, fmt.Sprintf("%s: acknowledged commit lost or changed: have %+v, committed %s %s", key, c, k.StepID, k.Output))
			}
		case CommitSent:
			switch {
			case isCommitted && c.StepID == k.StepID && c.Output == k.Output:
				k.Stage = CommitAcked // the commit landed; its reply was lost
				l.landed++
			case isOutstanding && o == k.StepID:
				k.Stage = Reserved // the commit never ran
				l.notRun++
			default:
				bad = append(bad, fmt.Sprintf("%s: commit in flight at the kill, now committed=%v (%+v) outstanding=%v (%s)", key, isCommitted, c, isOutstanding, o))
			}
		case Reserved:
			if isCommitted || !isOutstanding || o != k.StepID {
				bad = append(bad, fmt.Sprintf("%s: reserved as %s and never committed, now committed=%v outstanding=%v (%s)", key, k.StepID, isCommitted, isOutstanding, o))
			}
		case BeginSent:
			switch {
			case isCommitted:
				bad = append(bad, fmt.Sprintf("%s: only begun, yet committed: %+v", key, c))
			case isOutstanding:
				k.Stage, k.StepID = Reserved, o // the reservation landed; its reply was lost
				l.lostNew++
			}
		}
	}
	for _, m := range []map[string]bool{keysOf(v.Committed), keysOf(v.Outstanding)} {
		for key := range m {
			if l.keys[key] == nil {
				bad = append(bad, fmt.Sprintf("%s is in the store but no driver sent it", key))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// Counts summarises the ledger by stage and by how the kills fell.
func (l *Ledger) Counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, k := range l.keys {
		out[k.Stage.String()]++
	}
	out["kill between commit and its reply"] = l.landed
	out["kill before a sent commit ran"] = l.notRun
	out["kill between reservation and its reply"] = l.lostNew
	return out
}

// ByStage returns the keys at stage s with their state.
func (l *Ledger) ByStage(s Stage) map[string]Key {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]Key{}
	for key, k := range l.keys {
		if k.Stage == s {
			out[key] = *k
		}
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
