package steplog

import (
	"context"
	"math"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
)

// BeginWorkflowRun registers (or re-registers) a run and returns its new
// epoch, allocated by the store in the same transaction. A repeat for an
// existing run keeps its committed steps (a retried workflow expects them
// replayed) and the first non-null inputs.
func (l *Log) BeginWorkflowRun(ctx context.Context, runID, phaseID string, inputs []byte) (uint64, error) {
	var epoch int64
	err := l.update(ctx, func(tx storage.Store, now time.Time) error {
		var err error
		if epoch, err = tx.NextEpoch(ctx); err != nil {
			return err
		}
		return tx.UpsertRun(ctx, runID, phaseID, epoch, inputs, now)
	})
	if err != nil {
		return 0, err
	}
	return uint64(epoch), nil
}

// QueryRun returns a run's committed steps in commit order. Reservations,
// abandoned and superseded steps never appear.
func (l *Log) QueryRun(ctx context.Context, runID, phaseID string) ([]storage.StepRecord, error) {
	var out []storage.StepRecord
	err := l.st.View(ctx, func(tx storage.Store) error {
		steps, found, err := tx.CommittedSteps(ctx, runID, phaseID)
		if err != nil {
			return err
		}
		if !found {
			return ErrRunNotFound
		}
		out = steps
		return nil
	})
	return out, l.result(ctx, err)
}

// RecoverInFlight returns every run whose current epoch is above sinceEpoch
// and that has outstanding reservations, in epoch order, with each run's
// latest committed step and its reservations in the order they were made.
func (l *Log) RecoverInFlight(ctx context.Context, sinceEpoch uint64) ([]storage.InFlightRun, error) {
	if sinceEpoch > math.MaxInt64 {
		return []storage.InFlightRun{}, nil // no epoch can exceed what a store keeps
	}
	var out []storage.InFlightRun
	err := l.st.View(ctx, func(tx storage.Store) error {
		var err error
		out, err = tx.InFlight(ctx, int64(sinceEpoch))
		return err
	})
	return out, l.result(ctx, err)
}
