package storage

import (
	"context"
	"time"
)

// Store is one durable step log. The Store handed to an Update or View
// callback is bound to that transaction: everything it reads and writes
// commits or rolls back together. A View callback only reads.
//
// Database failures come back as *BackendError; errors fn returns pass
// through unchanged. It is the only interface of the kit, with exactly two
// implementations (sqlitestore and pgstore).
type Store interface {
	// Update runs fn in one read-write transaction that excludes every
	// other writer. A backend may run fn again after a failure that left
	// nothing committed, so fn must not have effects outside it.
	Update(ctx context.Context, fn func(tx Store) error) error
	// View runs fn in one consistent read snapshot.
	View(ctx context.Context, fn func(tx Store) error) error
	Ping(ctx context.Context) error
	Close() error

	// NextEpoch allocates the next store-wide epoch (never reused, also
	// across restarts).
	NextEpoch(ctx context.Context) (int64, error)
	// UpsertRun records a run at epoch, keeping its first non-null inputs.
	UpsertRun(ctx context.Context, runID, phaseID string, epoch int64, inputs []byte, now time.Time) error
	RunExists(ctx context.Context, runID, phaseID string) (bool, error)

	// ActiveStep is the reserved or committed step holding key, or nil.
	ActiveStep(ctx context.Context, key string) (*Step, error)
	// StepState is a step's state, "" when there is no such step.
	StepState(ctx context.Context, stepID string) (State, error)
	InsertReservation(ctx context.Context, s Step) error
	// Supersede ends a lapsed reservation in favour of the step by.
	Supersede(ctx context.Context, stepID, by string, now time.Time) error
	// Commit records a reserved step's outcome with the next commit
	// sequence number.
	Commit(ctx context.Context, stepID, outcome string, output, errJSON []byte, now time.Time) error
	// Abandon releases a reservation; false when the step was not reserved.
	Abandon(ctx context.Context, stepID, reason string, now time.Time) (bool, error)

	// CommittedSteps are a run's committed steps in commit order; found is
	// false when the run does not exist.
	CommittedSteps(ctx context.Context, runID, phaseID string) (steps []StepRecord, found bool, err error)
	// InFlight is every run above sinceEpoch with outstanding reservations,
	// in epoch order, each with its reservations in the order they were
	// made.
	InFlight(ctx context.Context, sinceEpoch int64) ([]InFlightRun, error)
}
