package queue

import (
	"context"
	"time"

	"github.com/animus-plugins/animus-plugins/pkg/pluginkit/rustjson"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/storage"
	"github.com/animus-plugins/animus-plugins/pkg/queuekit/wire"
)

// The four ticket mutations (queue-v2.md §3.6–§3.8). Every ticket problem
// is an outcome in a normal result; only bad input (caught while decoding)
// is a JSON-RPC error.

const (
	reasonNotOwner = "execution fence does not own this queue lease"
	reasonExpired  = "queue lease has expired and requires recovery"
)

// ticketOp is one mutation's specific step, run on an assigned entry the
// fence owns; stored is the entry's current fence.
type ticketOp func(tx storage.Store, e *storage.Entry, stored *wire.ExecutionFence, now time.Time) (wire.MutationV2Response, error)

// fenced runs the common order of evaluation of §3.6 in one write
// transaction, then op.
func (s *Service) fenced(ctx context.Context, method string, f *wire.ExecutionFence, op ticketOp) (wire.MutationV2Response, error) {
	var resp wire.MutationV2Response
	err := s.update(ctx, func(tx storage.Store) error {
		now := s.now()
		e, err := tx.Get(ctx, f.QueueLease.EntryID)
		if err != nil {
			return err
		}
		if e == nil {
			resp, err = gone(ctx, tx, method, f)
			return err
		}
		stored := fenceOf(e)
		owned := e.Ticketed() && owns(f, stored)
		switch {
		case method == "queue/v2/release_pending" && e.State == wire.StatusPending && owned:
			resp = wire.MutationV2Response{Outcome: wire.OutcomeAlreadyApplied}
		case e.State != wire.StatusAssigned:
			resp = wire.MutationV2Response{Outcome: wire.OutcomeNotAssigned, Reason: "queue entry is " + e.State}
		case !owned:
			resp = wire.MutationV2Response{Outcome: wire.OutcomeStaleFence, Reason: reasonNotOwner}
		default:
			resp, err = op(tx, e, stored, now)
		}
		return err
	})
	if err != nil {
		return wire.MutationV2Response{}, s.storageError(ctx, method, err)
	}
	return resp, nil
}

// gone answers for an entry that is no longer live (§3.8).
func gone(ctx context.Context, tx storage.Store, method string, f *wire.ExecutionFence) (wire.MutationV2Response, error) {
	rec, err := tx.GetFinished(ctx, f.QueueLease.EntryID)
	if err != nil || rec == nil {
		return wire.MutationV2Response{Outcome: wire.OutcomeNotFound}, err
	}
	if rec.Outcome == "dropped" {
		return wire.MutationV2Response{Outcome: wire.OutcomeNotAssigned, Reason: "queue entry is dropped"}, nil
	}
	if stored := finishedFence(rec); method == "queue/v2/completion" && owns(f, stored) {
		return wire.MutationV2Response{Outcome: wire.OutcomeAlreadyApplied, Execution: stored}, nil
	}
	return wire.MutationV2Response{Outcome: wire.OutcomeNotAssigned, Reason: "queue entry is done"}, nil
}

// ttl is min(requested, configured), or the configured TTL.
func (s *Service) ttl(requested *uint64) time.Duration {
	d := s.rules.Ticket()
	if requested != nil && *requested < uint64(d/time.Second) {
		d = time.Duration(*requested) * time.Second
	}
	return d
}

// setExpiry stores a lease expiry as the exact text emitted and its
// instant.
func setExpiry(e *storage.Entry, exp time.Time) {
	at, ns := rustjson.TimeZ(exp), unixNS(exp)
	e.LeaseExpiresAt, e.LeaseExpiresNS = &at, &ns
}

func live(e *storage.Entry, now time.Time) bool {
	return e.LeaseExpiresNS != nil && *e.LeaseExpiresNS > unixNS(now)
}

// renew extends a live lease to max(current, now + ttl): the daemon treats
// a shortened expiry as fatal, so it never moves back, even when the
// setting was lowered between calls.
func (s *Service) renew(ctx context.Context, req wire.RenewRequest) (wire.MutationV2Response, error) {
	return s.fenced(ctx, "queue/v2/lease/renew", req.Execution, func(tx storage.Store, e *storage.Entry, _ *wire.ExecutionFence, now time.Time) (wire.MutationV2Response, error) {
		if !live(e, now) {
			return wire.MutationV2Response{Outcome: wire.OutcomeStaleFence, Reason: reasonExpired}, nil
		}
		if exp := now.Add(s.ttl(req.TTLSecs)); unixNS(exp) > *e.LeaseExpiresNS {
			setExpiry(e, exp)
			if err := tx.Save(ctx, e); err != nil {
				return wire.MutationV2Response{}, err
			}
		}
		return wire.MutationV2Response{Outcome: wire.OutcomeApplied, Execution: fenceOf(e)}, nil
	})
}

// recoverLease transfers an expired lease to another owner with the next
// lease generation, fencing the old owner out.
func (s *Service) recoverLease(ctx context.Context, req wire.RecoverRequest) (wire.MutationV2Response, error) {
	const method = "queue/v2/lease/recover"
	return s.fenced(ctx, method, req.Execution, func(tx storage.Store, e *storage.Entry, stored *wire.ExecutionFence, now time.Time) (wire.MutationV2Response, error) {
		if live(e, now) {
			return wire.MutationV2Response{Outcome: wire.OutcomeLeaseStillLive, Execution: stored}, nil
		}
		e.LeaseOwner, e.LeaseGeneration = &req.NewOwnerID, e.LeaseGeneration+1
		setExpiry(e, now.Add(s.ttl(req.TTLSecs)))
		if err := tx.Save(ctx, e); err != nil {
			return wire.MutationV2Response{}, err
		}
		reason := "recovered by " + req.NewOwnerID
		if err := record(ctx, tx, e, method, wire.StatusAssigned, wire.StatusAssigned, &reason, now); err != nil {
			return wire.MutationV2Response{}, err
		}
		return wire.MutationV2Response{Outcome: wire.OutcomeApplied, Execution: fenceOf(e)}, nil
	})
}

// completionV2 finishes the entry with the status. Expiry is not checked:
// a ticket nobody recovered still owns its entry (§6.2).
func (s *Service) completionV2(ctx context.Context, req wire.CompletionV2Request) (wire.MutationV2Response, error) {
	const method = "queue/v2/completion"
	return s.fenced(ctx, method, req.Execution, func(tx storage.Store, e *storage.Entry, stored *wire.ExecutionFence, now time.Time) (wire.MutationV2Response, error) {
		if err := tx.Finish(ctx, e.ID, req.Status, rustjson.Time(now), method); err != nil {
			return wire.MutationV2Response{}, err
		}
		if err := record(ctx, tx, e, method, wire.StatusAssigned, req.Status, nil, now); err != nil {
			return wire.MutationV2Response{}, err
		}
		return wire.MutationV2Response{Outcome: wire.OutcomeApplied, Execution: stored}, nil
	})
}

// releasePendingV2 puts the entry back at its position: pending, the
// workflow id and the lease fields kept (so the same workflow id comes
// back with the next lease generation), expiry not checked.
func (s *Service) releasePendingV2(ctx context.Context, req wire.ReleasePendingV2Request) (wire.MutationV2Response, error) {
	const method = "queue/v2/release_pending"
	return s.fenced(ctx, method, req.Execution, func(tx storage.Store, e *storage.Entry, _ *wire.ExecutionFence, now time.Time) (wire.MutationV2Response, error) {
		e.State, e.AssignedAt, e.AssignedAtNS = wire.StatusPending, nil, nil
		if err := tx.Save(ctx, e); err != nil {
			return wire.MutationV2Response{}, err
		}
		if err := record(ctx, tx, e, method, wire.StatusAssigned, wire.StatusPending, &req.Reason, now); err != nil {
			return wire.MutationV2Response{}, err
		}
		return wire.MutationV2Response{Outcome: wire.OutcomeApplied}, nil
	})
}
