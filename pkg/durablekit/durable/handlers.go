package durable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/durablekit/steplog"
	"github.com/animus-plugins/animus-plugins/pkg/durablekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit"
	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
)

// maxReasonBytes bounds the stored abandon reason. A longer one is cut, not
// refused: refusing an abandon would leave the key blocked until its TTL.
const maxReasonBytes = 1024

// Register adds the six durable methods to mux, in the order the kind lists
// them (which is the order capabilities.methods shows).
func (s *Service) Register(mux *pluginkit.Mux) {
	pluginkit.Handle(mux, "durable/begin_workflow_run", s.BeginWorkflowRun)
	pluginkit.Handle(mux, "durable/begin_step", s.BeginStep)
	pluginkit.Handle(mux, "durable/commit_step", s.CommitStep)
	pluginkit.Handle(mux, "durable/abandon_step", s.AbandonStep)
	pluginkit.Handle(mux, "durable/recover_in_flight", s.RecoverInFlight)
	pluginkit.Handle(mux, "durable/query_run", s.QueryRun)
}

// BeginWorkflowRun registers the run and returns a new, persisted epoch.
func (s *Service) BeginWorkflowRun(ctx context.Context, p BeginWorkflowRunParams) (BeginWorkflowRunResult, error) {
	inputs := compactJSON(p.Inputs)
	if err := checkSize("inputs", inputs, s.cfg.MaxPayloadBytes); err != nil {
		return BeginWorkflowRunResult{}, err
	}
	st, err := s.storeFor(ctx)
	if err != nil {
		return BeginWorkflowRunResult{}, err
	}
	epoch, err := st.BeginWorkflowRun(ctx, p.RunID, p.PhaseID, inputs)
	if err != nil {
		return BeginWorkflowRunResult{}, s.wireError(ctx, err, runRef(p.RunID, p.PhaseID))
	}
	return BeginWorkflowRunResult{Epoch: epoch}, nil
}

// BeginStep resolves the idempotency key (committed, in progress, or a new
// reservation).
func (s *Service) BeginStep(ctx context.Context, p BeginStepParams) (BeginStepResult, error) {
	payload := compactJSON(p.Payload)
	if err := checkSize("payload", payload, s.cfg.MaxPayloadBytes); err != nil {
		return BeginStepResult{}, err
	}
	st, err := s.storeFor(ctx)
	if err != nil {
		return BeginStepResult{}, err
	}
	r, err := st.BeginStep(ctx, steplog.StepRequest{
		Identity:       storage.Identity{RunID: p.RunID, PhaseID: p.PhaseID, StepName: p.StepName},
		IdempotencyKey: p.IdempotencyKey,
		Payload:        payload,
		TTL:            s.ttl(p.ReservationTTLSecs),
	})
	if err != nil {
		return BeginStepResult{}, s.wireError(ctx, err, runRef(p.RunID, p.PhaseID))
	}
	out := BeginStepResult{Status: string(r.Status), StepID: r.StepID}
	switch r.Status {
	case steplog.StatusAlreadyCommitted:
		out.PriorOutput = r.Output
	case steplog.StatusPriorError:
		out.PriorError = r.Error
	case steplog.StatusInProgress:
		out.ReservationExpiresAt = rustjson.Time(r.ExpiresAt)
	}
	return out, nil
}

// ttl is the reservation's lifetime: the caller's, else the default (0 also
// means the default), capped at MaxReservationTTL.
func (s *Service) ttl(secs *uint64) time.Duration {
	if secs == nil || *secs == 0 {
		return s.cfg.ReservationTTL
	}
	if *secs >= uint64(MaxReservationTTL/time.Second) {
		return MaxReservationTTL
	}
	return time.Duration(*secs) * time.Second
}

// CommitStep records the outcome. Validate has already checked outcome
// (-32307) and the shape of error.
func (s *Service) CommitStep(ctx context.Context, p CommitStepParams) (AckResult, error) {
	output := compactJSON(p.Output)
	stepErr, err := normalizeStepError(p.Error)
	if err != nil {
		return AckResult{}, err
	}
	if err := firstError(checkSize("output", output, s.cfg.MaxPayloadBytes),
		checkSize("error", stepErr, s.cfg.MaxPayloadBytes)); err != nil {
		return AckResult{}, err
	}
	st, err := s.storeFor(ctx)
	if err != nil {
		return AckResult{}, err
	}
	if err := st.CommitStep(ctx, steplog.Commit{StepID: p.StepID, Outcome: *p.Outcome, Output: output, Error: stepErr}); err != nil {
		return AckResult{}, s.wireError(ctx, err, stepRef(p.StepID))
	}
	return AckResult{Ack: true}, nil
}

// AbandonStep releases a reservation; ack is false when there was none to
// release (unknown, committed, abandoned or superseded step).
func (s *Service) AbandonStep(ctx context.Context, p AbandonStepParams) (AckResult, error) {
	st, err := s.storeFor(ctx)
	if err != nil {
		return AckResult{}, err
	}
	reason := ""
	if p.Reason != nil {
		reason = truncateUTF8(*p.Reason, maxReasonBytes)
	}
	released, err := st.AbandonStep(ctx, p.StepID, reason)
	if err != nil {
		return AckResult{}, s.wireError(ctx, err, stepRef(p.StepID))
	}
	return AckResult{Ack: released}, nil
}

// RecoverInFlight lists runs with outstanding reservations and an epoch
// above since_epoch.
func (s *Service) RecoverInFlight(ctx context.Context, p RecoverInFlightParams) (RecoverInFlightResult, error) {
	st, err := s.storeFor(ctx)
	if err != nil {
		return RecoverInFlightResult{}, err
	}
	runs, err := st.RecoverInFlight(ctx, *p.SinceEpoch)
	if err != nil {
		return RecoverInFlightResult{}, s.wireError(ctx, err, "")
	}
	now := s.now()
	out := RecoverInFlightResult{InFlight: make([]InFlightRun, 0, len(runs))}
	for _, r := range runs {
		run := InFlightRun{RunID: r.RunID, PhaseID: r.PhaseID, ReplayState: &ReplayState{Epoch: r.Epoch}}
		if r.HasCommitted {
			name := r.LastCommittedStep
			run.LastCommittedStep = &name
		}
		for _, o := range r.Outstanding {
			run.ReplayState.Outstanding = append(run.ReplayState.Outstanding, Outstanding{
				Expired:              !o.ExpiresAt.After(now),
				IdempotencyKey:       o.IdempotencyKey,
				ReservationExpiresAt: rustjson.Time(o.ExpiresAt),
				ReservedAt:           rustjson.Time(o.ReservedAt),
				StepID:               o.StepID,
				StepName:             o.StepName,
			})
		}
		out.InFlight = append(out.InFlight, run)
	}
	return out, nil
}

// QueryRun returns the run's committed steps in commit order. No method
// ends a run, so its status is always "pending" (durable.md D5).
func (s *Service) QueryRun(ctx context.Context, p QueryRunParams) (QueryRunResult, error) {
	st, err := s.storeFor(ctx)
	if err != nil {
		return QueryRunResult{}, err
	}
	recs, err := st.QueryRun(ctx, p.RunID, p.PhaseID)
	if err != nil {
		return QueryRunResult{}, s.wireError(ctx, err, runRef(p.RunID, p.PhaseID))
	}
	out := QueryRunResult{RunID: p.RunID, PhaseID: p.PhaseID, Status: "pending", Steps: make([]StepRecord, 0, len(recs))}
	for _, r := range recs {
		out.Steps = append(out.Steps, StepRecord{
			CommittedAt:    rustjson.Time(r.CommittedAt),
			Error:          r.Error,
			IdempotencyKey: r.IdempotencyKey,
			Outcome:        r.Outcome,
			Output:         r.Output,
			StepID:         r.StepID,
			StepName:       r.StepName,
		})
	}
	return out, nil
}

// wireError maps a store error onto the kind's codes. Messages name what is
// wrong in the caller's terms (ref names the run or step the call was
// about) and never carry SQL or file paths; the cause of a backend failure
// goes to the log and to health/check's last_error.
func (s *Service) wireError(ctx context.Context, err error, ref string) error {
	var nd *steplog.NondeterminismError
	var be *storage.BackendError
	switch {
	case errors.Is(err, steplog.ErrRunNotFound):
		return pluginkit.NotFound("%s: begin_workflow_run was never called for this (run_id, phase_id)", ref).WithCode(CodeRunNotFound)
	case errors.Is(err, steplog.ErrStepNotFound):
		return pluginkit.NotFound("%s: no reservation with this step_id (never issued, or abandoned)", ref).WithCode(CodeStepNotFound)
	case errors.Is(err, steplog.ErrSuperseded):
		return pluginkit.Errorf(pluginkit.CategoryConflict,
			"reservation expired: the TTL of %s ran out and another caller has reserved its idempotency key since; this holder must not commit", ref).
			WithCode(CodeReservationExpired)
	case errors.As(err, &nd):
		return pluginkit.Errorf(pluginkit.CategoryConflict,
			"replay nondeterminism: the idempotency key is recorded for a different step (run_id %q, phase_id %q, step_name %q)",
			clipString(nd.Recorded.RunID, 128), clipString(nd.Recorded.PhaseID, 128), clipString(nd.Recorded.StepName, 128)).
			WithCode(CodeReplayNondeterminism)
	case errors.As(err, &be):
		msg := "durable store database error"
		if be.Busy {
			msg = "durable store database is busy (another process held the write lock past the busy timeout); retry"
		}
		if be.Reason != "" {
			msg = be.Reason
		}
		s.logger().Warn("durable store backend error", "op", be.Op, "busy", be.Busy, "error", be.Err)
		if p := pluginkit.PeerFrom(ctx); p != nil {
			p.RecordError(err)
		}
		return pluginkit.Unavailable("%s", msg).WithCode(CodeBackendUnavailable).WithData("retryable", be.Busy).Wrap(err)
	}
	return err // context errors: pluginkit answers cancelled or timeout
}

func runRef(run, phase string) string {
	return fmt.Sprintf("run %q phase %q", clipString(run, 128), clipString(phase, 128))
}

func stepRef(id string) string { return fmt.Sprintf("step %q", clipString(id, 128)) }
