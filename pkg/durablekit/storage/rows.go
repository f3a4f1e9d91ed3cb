package storage

import "time"

// State is a step row's state. A row is born reserved and ends in exactly
// one of the other three; only reserved rows ever change.
type State string

// The step states.
const (
	Reserved   State = "reserved"
	Committed  State = "committed"
	Abandoned  State = "abandoned"
	Superseded State = "superseded"
)

// Identity is what a step is, apart from its key.
type Identity struct {
	RunID, PhaseID, StepName string
}

// Step is a reservation or a committed step.
type Step struct {
	ID string
	Identity
	IdempotencyKey string
	State          State
	Payload        []byte // compact JSON; nil when absent
	ReservedAt     time.Time
	ExpiresAt      time.Time
	Outcome        string // committed: "success" or "error"
	Output, Error  []byte // committed: compact JSON; nil when absent
}

// StepRecord is one committed step.
type StepRecord struct {
	StepID, StepName, IdempotencyKey string
	Outcome                          string // "success" or "error"
	CommittedAt                      time.Time
	Output, Error                    []byte // compact JSON; nil when absent
}

// Reservation is one outstanding (reserved, not committed or abandoned)
// step. It may have expired; until someone supersedes it, its holder may
// still commit.
type Reservation struct {
	StepID, StepName, IdempotencyKey string
	ReservedAt, ExpiresAt            time.Time
}

// InFlightRun is a run with at least one outstanding reservation.
type InFlightRun struct {
	RunID, PhaseID    string
	Epoch             uint64
	LastCommittedStep string // step_name of the latest commit
	HasCommitted      bool   // whether LastCommittedStep is set
	Outstanding       []Reservation
}

// BackendError is a database failure. Busy says whether retrying may
// succeed (lock contention that outlasted the timeout, a database that
// cannot be reached) rather than an I/O or schema problem.
type BackendError struct {
	Op   string
	Busy bool
	// Reason, when set, is what the host is told (never SQL, paths or
	// secrets); otherwise the protocol words it from Busy.
	Reason string
	Err    error
}

func (e *BackendError) Error() string { return e.Op + ": " + e.Err.Error() }

// Unwrap exposes the driver's error.
func (e *BackendError) Unwrap() error { return e.Err }
