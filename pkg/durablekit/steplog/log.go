package steplog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
)

// The log's own failures. Anything else an operation returns is a
// *storage.BackendError (the database could not do its job) or a context
// error.
var (
	// ErrRunNotFound: no begin_workflow_run for this (run_id, phase_id).
	ErrRunNotFound = errors.New("run not found")
	// ErrStepNotFound: the step id was never issued, or its reservation was
	// abandoned.
	ErrStepNotFound = errors.New("step not found")
	// ErrSuperseded: the reservation expired and another caller has since
	// reserved the same key, so this holder must not commit.
	ErrSuperseded = errors.New("reservation superseded")
)

// NondeterminismError reports an idempotency key already recorded for a
// different step: serving that step's outcome would replay the wrong side
// effect.
type NondeterminismError struct {
	Recorded storage.Identity // the step that owns the key
}

func (e *NondeterminismError) Error() string {
	return fmt.Sprintf("idempotency key is recorded for run %q phase %q step %q",
		e.Recorded.RunID, e.Recorded.PhaseID, e.Recorded.StepName)
}

// Log is a durable step log on a store.
type Log struct {
	st  storage.Store
	now func() time.Time
}

// New returns the log kept in st; now is the clock (nil: time.Now), read
// inside each write transaction so timestamps follow commit order.
func New(st storage.Store, now func() time.Time) *Log {
	if now == nil {
		now = time.Now
	}
	return &Log{st: st, now: now}
}

// Store is the log's store.
func (l *Log) Store() storage.Store { return l.st }

// update runs fn in one write transaction with the clock read under the
// writers' lock.
func (l *Log) update(ctx context.Context, fn func(tx storage.Store, now time.Time) error) error {
	return l.result(ctx, l.st.Update(ctx, func(tx storage.Store) error { return fn(tx, l.now().UTC()) }))
}

// result reports a caller that gave up as its context error: the caller
// went away, the backend is fine.
func (l *Log) result(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// newStepID returns a random, unguessable step id. Step ids are handles a
// caller hands back; they carry no order and no meaning.
func newStepID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "step_" + hex.EncodeToString(b[:])
}
